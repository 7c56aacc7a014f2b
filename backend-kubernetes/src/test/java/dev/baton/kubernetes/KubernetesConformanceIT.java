package dev.baton.kubernetes;

import dev.baton.conformance.ConformanceFixture;
import dev.baton.conformance.LeaseStoreConformance;

/**
 * The whole conformance suite on Kubernetes Leases: against the fabric8 CRUD mock server, or, when
 * {@code BATON_K8S_KUBECONFIG} names a kubeconfig, against that cluster (see {@link
 * KubernetesFixture}).
 */
class KubernetesConformanceIT extends LeaseStoreConformance {

  @Override
  protected ConformanceFixture fixture() {
    return new KubernetesFixture();
  }
}
