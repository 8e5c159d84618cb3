#!/usr/bin/env bash
# Renames the template in one step: Maven group, artifact (and every name derived from it), Java package, and the
# base URI of the RFC 9457 problem types. Run it once on a fresh fork, then build and test:
#
#   scripts/rename.sh <group> <artifact> <package> <problem-base-uri>
#   scripts/rename.sh com.acme.payments card-auth com.acme.cardauth https://errors.acme.com/problems
#   ./mvnw -B verify
#
# What changes, in every text file of the tree (not .git/, target/, .tools/):
#   group     the pom's <groupId> of this project
#   artifact  payments-authorization (pom artifactId and so the jar's name, Kubernetes objects, labels, Secrets,
#             the Redis key prefix, the bearer realm), payments_authorization (recording rules) and
#             PaymentsAuthorization (alert names), each in its own spelling; file names holding it too
#   package   com.example.payments and com/example/payments; the source directories move with it
#   uri       https://payments.example.com/problems (the "type" of every problem body), and its host alone
# Each name also where a file escapes it: payments\.example\.com in a regular expression, com\\.example in a Java
# string, %2F-encoded, \u002E, &#46;. Not renamed: the labels that derive stored ids and the default Redis key prefix
# (StableNames), written so that no pattern here matches them: a renamed service keeps its attempt ids and records;
# and the database migrations (src/main/resources/db/migration), which Flyway checksums: an edited applied migration
# stops a deployed service at startup.
# The current names are read from the tree (pom, Problem.java), so running it again renames from the last names.
# Only ASCII lower-case names: the group and package are dotted Java identifiers, the artifact kebab-case.
# scripts/rename.sh is itself left alone. RenameIT runs it on a copy of the tree, builds and starts the result.
set -euo pipefail

usage() {
  sed -n '4,6p' "$0" | sed 's/^# \{0,3\}//' >&2
  exit 2
}
[ $# -eq 4 ] || usage
new_group=$1
new_artifact=$2
new_package=$3
new_uri=${4%/}

dotted='^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$'
[[ $new_group =~ $dotted ]] || { echo "group '$new_group': allowed: dotted lower-case identifiers, e.g. com.acme.payments" >&2; exit 2; }
[[ $new_package =~ $dotted ]] || { echo "package '$new_package': allowed: dotted lower-case Java identifiers, e.g. com.acme.cardauth" >&2; exit 2; }
[[ $new_artifact =~ ^[a-z][a-z0-9]*(-[a-z0-9]+)*$ ]] || { echo "artifact '$new_artifact': allowed: kebab-case, e.g. card-auth" >&2; exit 2; }
[[ $new_uri =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] || { echo "problem-base-uri '$new_uri': allowed: an http(s) URI without query, e.g. https://errors.acme.com/problems" >&2; exit 2; }

cd "$(dirname "$0")/.."
root=$(pwd)

# The current names, from the tree itself.
old_group=$(sed -n '/<\/parent>/,/<version>/s#.*<groupId>\(.*\)</groupId>.*#\1#p' pom.xml | head -n 1)
old_artifact=$(sed -n '/<\/parent>/,/<version>/s#.*<artifactId>\(.*\)</artifactId>.*#\1#p' pom.xml | head -n 1)
old_package=$(sed -n 's#.*<mainClass>\(.*\)\.Main</mainClass>.*#\1#p' pom.xml)
problem=$(grep -rl --include=Problem.java 'TYPE_BASE = ' src/main/java | head -n 1)
old_uri=$(sed -n 's#.*TYPE_BASE = "\(.*\)/";.*#\1#p' "$problem")
for name in old_group old_artifact old_package old_uri; do
  [ -n "${!name}" ] || { echo "could not read the current ${name#old_} from the tree" >&2; exit 1; }
done

# kebab-case to snake_case and CamelCase: payments-authorization -> payments_authorization, PaymentsAuthorization.
snake() { printf '%s' "${1//-/_}"; }
host() { printf '%s' "$1" | sed -E 's#^[a-z]+://([^/:]+).*#\1#'; }
camel() { printf '%s' "$1" | awk -F- '{ for (i = 1; i <= NF; i++) printf "%s", toupper(substr($i, 1, 1)) substr($i, 2) }'; }

echo "group    $old_group -> $new_group"
echo "artifact $old_artifact -> $new_artifact"
echo "package  $old_package -> $new_package"
echo "uri      $old_uri -> $new_uri"

files() {
  find . \( -path ./.git -o -path ./target -o -path ./.tools -o -name node_modules \
           -o -path ./src/main/resources/db/migration \) -prune \
    -o -type f ! -path ./scripts/rename.sh -print0 | xargs -0 grep -IlZ '' || true
}

# Perl with the names passed in the environment: no name is ever parsed as a regular expression or sed syntax.
export OLD_GROUP=$old_group NEW_GROUP=$new_group OLD_ARTIFACT=$old_artifact NEW_ARTIFACT=$new_artifact \
  OLD_PACKAGE=$old_package NEW_PACKAGE=$new_package OLD_URI=$old_uri NEW_URI=$new_uri \
  OLD_HOST=$(host "$old_uri") NEW_HOST=$(host "$new_uri") \
  OLD_SNAKE=$(snake "$old_artifact") NEW_SNAKE=$(snake "$new_artifact") \
  OLD_CAMEL=$(camel "$old_artifact") NEW_CAMEL=$(camel "$new_artifact") \
  OLD_PATH=${old_package//.//} NEW_PATH=${new_package//.//}

# 1. The project's own groupId (the first one after </parent>), before the package: the two may be equal.
perl -0pi -e 's{(</parent>.*?<groupId>)\Q$ENV{OLD_GROUP}\E(</groupId>)}{$1$ENV{NEW_GROUP}$2}s' pom.xml

# 2. Text: URI first (it may contain the other names), then its host, the package, the artifact's spellings. Each
# punctuation character of an old name matches in every spelling a file may give it: plain, backslash-escaped (a
# regular expression's payments\.example\.com, a Java string's com\\.example), percent-encoded (%2F), a \u escape
# or an HTML character reference; the new name is written with the spelling the match used for the same character.
read -r -d '' RENAME_TEXT <<'PERL' || true
BEGIN {
  sub spelled {
    return join '', map {
      my $o = ord $_;
      /[A-Za-z0-9]/ ? $_
        : sprintf('(?:\\\\*%s|%%(?i:%02X)|\\\\+u(?i:%04X)|&\\#%d;|&\\#[xX](?i:%02X);)', quotemeta($_), $o, $o, $o, $o)
    } split //, $_[0];
  }
  # The match spelled each punctuation character of the old name in some way; the new name takes that spelling for the
  # same character, the plain one for a character the old name does not have.
  sub respell {
    my ($matched, $old, $new) = @_;
    my %format;
    for my $c (split //, $old) {
      if ($c =~ /[A-Za-z0-9]/) { $matched = substr($matched, 1); next; }
      my $style;
      if ($matched =~ s/^(\\+)u00([0-9A-Fa-f]{2})//) { $style = $1 . ($2 =~ /[a-f]/ ? 'u%04x' : 'u%04X'); }
      elsif ($matched =~ s/^%([0-9A-Fa-f]{2})//) { $style = $1 =~ /[a-f]/ ? '%%%02x' : '%%%02X'; }
      elsif ($matched =~ s/^&#([xX])([0-9A-Fa-f]+);//) { $style = "&#$1" . ($2 =~ /[a-f]/ ? '%02x' : '%02X') . ';'; }
      elsif ($matched =~ s/^&#[0-9]+;//) { $style = '&#%d;'; }
      elsif ($matched =~ s/^(\\*).//) { $style = $1 . '%c'; }
      $format{$c} //= $style;
    }
    return join '', map { /[A-Za-z0-9]/ ? $_ : sprintf($format{$_} // '%c', ord $_) } split //, $new;
  }
  our @renames;
  for (["OLD_URI", "NEW_URI", '', ''],
       ["OLD_HOST", "NEW_HOST", '(?<![A-Za-z0-9.-])', '(?![A-Za-z0-9-])'],
       ["OLD_PACKAGE", "NEW_PACKAGE", '(?<![A-Za-z0-9_.])', '(?![A-Za-z0-9_])'],
       ["OLD_PATH", "NEW_PATH", '(?<![A-Za-z0-9_])', '(?![A-Za-z0-9_])'],
       ["OLD_ARTIFACT", "NEW_ARTIFACT", '', ''],
       ["OLD_SNAKE", "NEW_SNAKE", '', ''],
       ["OLD_CAMEL", "NEW_CAMEL", '', '']) {
    my ($old, $new, $before, $after) = ($ENV{$_->[0]}, $ENV{$_->[1]}, $_->[2], $_->[3]);
    push @renames, [qr/$before@{[spelled($old)]}$after/, $old, $new];
  }
}
for my $rename (@renames) {
  my ($pattern, $old, $new) = @$rename;
  s/$pattern/respell($&, $old, $new)/ge;
}
PERL
files | xargs -0 -r perl -pi -e "$RENAME_TEXT"

# 3. Source directories: src/{main,test}/java/<old path> -> <new path>.
for tree in src/main/java src/test/java; do
  if [ -d "$tree/$OLD_PATH" ] && [ "$OLD_PATH" != "$NEW_PATH" ]; then
    tmp=$(mktemp -d "$root/$tree/.rename.XXXXXX")
    mv "$tree/$OLD_PATH"/* "$tmp"/
    # Remove the old directories left empty (com/example/payments, then com/example, then com).
    dir="$tree/$OLD_PATH"
    while [ "$dir" != "$tree" ] && rmdir "$dir" 2>/dev/null; do dir=$(dirname "$dir"); done
    mkdir -p "$tree/$NEW_PATH"
    mv "$tmp"/* "$tree/$NEW_PATH"/
    rmdir "$tmp"
  fi
done

# 4. File names holding the package (META-INF/services) or the artifact (the dashboard).
find . \( -path ./.git -o -path ./target -o -path ./.tools \) -prune -o -type f -print |
  while IFS= read -r file; do
    base=$(basename "$file")
    renamed=${base//$OLD_PACKAGE/$NEW_PACKAGE}
    renamed=${renamed//$OLD_ARTIFACT/$NEW_ARTIFACT}
    if [ "$renamed" != "$base" ]; then
      mv "$file" "$(dirname "$file")/$renamed"
    fi
  done

echo "Renamed. Next: ./mvnw -B verify, then review 'git status' and commit."
