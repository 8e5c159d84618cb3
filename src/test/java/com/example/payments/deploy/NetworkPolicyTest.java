package com.example.payments.deploy;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyIngressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPeer;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyPort;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.is;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shape of the rendered NetworkPolicy of every environment (docs/security.md): callers and Prometheus admitted by
 * namespace AND pod label in one peer, so a pod elsewhere that labels itself cannot get in; egress to DNS, the store
 * (Redis and PostgreSQL ports) and the issuer's port only, each to a selected peer.
 */
class NetworkPolicyTest {

    private static final Set<String> STORE_PORTS = Set.of("6379/TCP", "6380/TCP", "5432/TCP");
    private static final Set<String> DNS_PORTS = Set.of("53/UDP", "53/TCP");

    private static NetworkPolicy policy(String environment) {
        return RenderedOverlay.of(environment).one(NetworkPolicy.class);
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void itSelectsThePodsAndGovernsBothDirections(String environment) {
        NetworkPolicy policy = policy(environment);

        assertEquals(Map.of("app.kubernetes.io/name", RenderedOverlay.APP),
                     policy.getSpec().getPodSelector().getMatchLabels());
        assertThat(policy.getSpec().getPolicyTypes(), hasItems("Ingress", "Egress"));
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void everyIngressPeerIsANamespaceAndAPodLabelTogether(String environment) {
        List<NetworkPolicyIngressRule> rules = policy(environment).getSpec().getIngress();

        assertTrue(rules.stream().anyMatch(rule -> ports(rule.getPorts()).equals(Set.of("http/TCP"))),
                   "a rule admits callers to http");
        for (NetworkPolicyIngressRule rule : rules) {
            assertFalse(rule.getFrom() == null || rule.getFrom().isEmpty(), "a rule without 'from' admits everyone");
            assertFalse(rule.getPorts() == null || rule.getPorts().isEmpty(), "a rule without ports admits all ports");
            rule.getFrom().forEach(peer -> assertNamespaceAndPod(peer, "ingress " + ports(rule.getPorts())));
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void onlyPrometheusInTheMonitoringNamespaceReachesTheHealthListener(String environment) {
        for (NetworkPolicyIngressRule rule : policy(environment).getSpec().getIngress()) {
            if (ports(rule.getPorts()).stream().anyMatch(port -> port.startsWith("health/"))) {
                assertEquals(Set.of("health/TCP"), ports(rule.getPorts()), "health has a rule of its own");
                for (NetworkPolicyPeer peer : rule.getFrom()) {
                    assertEquals("monitoring", peer.getNamespaceSelector().getMatchLabels()
                            .get("kubernetes.io/metadata.name"));
                    assertEquals("prometheus", peer.getPodSelector().getMatchLabels().get("app.kubernetes.io/name"));
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void egressGoesToDnsTheStoreAndTheIssuerOnly(String environment) {
        List<NetworkPolicyEgressRule> rules = policy(environment).getSpec().getEgress();
        String issuerPort = issuerPort(environment) + "/TCP";
        Set<String> allowed = new TreeSet<>(DNS_PORTS);
        allowed.addAll(STORE_PORTS);
        allowed.add(issuerPort);

        List<Set<String>> rulePorts = new ArrayList<>();
        for (NetworkPolicyEgressRule rule : rules) {
            assertFalse(rule.getTo() == null || rule.getTo().isEmpty(), "an egress rule without 'to' goes anywhere");
            assertFalse(rule.getPorts() == null || rule.getPorts().isEmpty(), "an egress rule without ports");
            Set<String> ports = ports(rule.getPorts());
            assertTrue(allowed.containsAll(ports), () -> "egress to " + ports + "; allowed: " + allowed);
            for (NetworkPolicyPeer peer : rule.getTo()) {
                if (peer.getIpBlock() != null) {
                    assertFalse(peer.getIpBlock().getCidr().endsWith("/0"), "an ipBlock that is the whole internet");
                } else {
                    assertNamespaceAndPod(peer, "egress " + ports);
                }
            }
            rulePorts.add(ports);
        }
        assertTrue(rulePorts.contains(DNS_PORTS), "DNS: UDP and TCP 53");
        assertTrue(rulePorts.stream().anyMatch(ports -> ports.containsAll(STORE_PORTS)),
                   "the store: Redis (6379, 6380) and PostgreSQL (5432)");
        assertTrue(rulePorts.stream().anyMatch(ports -> ports.contains(issuerPort)),
                   () -> "the issuer's port " + issuerPort + " (authorizer.http.uri)");
    }

    @ParameterizedTest
    @MethodSource("com.example.payments.deploy.Environments#all")
    void dnsGoesToTheClusterResolverOnly(String environment) {
        for (NetworkPolicyEgressRule rule : policy(environment).getSpec().getEgress()) {
            if (ports(rule.getPorts()).equals(DNS_PORTS)) {
                for (NetworkPolicyPeer peer : rule.getTo()) {
                    assertThat(peer.getNamespaceSelector().getMatchLabels().get("kubernetes.io/metadata.name"),
                               is("kube-system"));
                    assertThat(peer.getPodSelector().getMatchLabels().get("k8s-app"), is("kube-dns"));
                }
            }
        }
    }

    // The port of authorizer.http.uri where the issuer is called over HTTP; dev's rule-based authorizer calls none,
    // so the template's https port.
    private static int issuerPort(String environment) {
        EnvironmentConfig config = EnvironmentConfig.of(RenderedOverlay.of(environment));
        if (!config.config().get("authorizer.type").asString().orElse("").equals("http")) {
            return 443;
        }
        URI uri = URI.create(config.string("authorizer.http.uri"));
        return uri.getPort() > 0 ? uri.getPort() : uri.getScheme().equals("https") ? 443 : 80;
    }

    private static void assertNamespaceAndPod(NetworkPolicyPeer peer, String where) {
        assertTrue(selects(peer.getNamespaceSelector()) && selects(peer.getPodSelector()),
                   () -> where + ": every peer names a namespace AND a pod label in one element, got " + peer);
    }

    private static boolean selects(LabelSelector selector) {
        return selector != null && (selector.getMatchLabels() != null && !selector.getMatchLabels().isEmpty()
                                    || selector.getMatchExpressions() != null
                                       && !selector.getMatchExpressions().isEmpty());
    }

    private static Set<String> ports(List<NetworkPolicyPort> ports) {
        Set<String> names = new TreeSet<>();
        for (NetworkPolicyPort port : ports == null ? List.<NetworkPolicyPort>of() : ports) {
            String value = port.getPort().getStrVal() != null ? port.getPort().getStrVal()
                    : String.valueOf(port.getPort().getIntVal());
            names.add(value + "/" + (port.getProtocol() == null ? "TCP" : port.getProtocol()));
        }
        return names;
    }
}
