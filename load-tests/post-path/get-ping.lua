-- wrk script: GET /ping (the bare GET of load-tests/post-path/run.sh); prints the same RESULT line as
-- post-new-keys.lua, counting answers other than 200 as non_201.
local common = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "../lib/wrk-common.lua")

setup = common.setup
common.count_answers_other_than(200)
