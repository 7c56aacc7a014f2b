package dev.baton.azureblob;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;

/** The copy of an SDK exception the store hands out as a cause: the text, and no secret. */
class SdkFailureTest {

  @Test
  void hidesSignaturesAndKeysAndKeepsTheRest() {
    assertThat(
            SdkFailure.hide(
                "GET https://a.blob.core.windows.net/c/b?sv=2021-08-06&sp=rwc&sig=abc%2Bdef%3D&se=x"))
        .isEqualTo(
            "GET https://a.blob.core.windows.net/c/b?sv=2021-08-06&sp=rwc&sig=<hidden>&se=x");
    assertThat(SdkFailure.hide("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=c2Vj==;"))
        .isEqualTo("DefaultEndpointsProtocol=https;AccountName=a;AccountKey=<hidden>;");
    assertThat(SdkFailure.hide("Authorization: SharedKey account:c2VjcmV0 rest"))
        .isEqualTo("Authorization: SharedKey account:<hidden> rest");
    assertThat(SdkFailure.hide("SharedAccessSignature=sv=1&sig=x"))
        .doesNotContain("sig=x")
        .startsWith("SharedAccessSignature=<hidden>");
  }

  @Test
  void copiesTheClassMessageStackAndCausesOnly() {
    IOException root = new IOException("reset; url ?sig=secret");
    UncheckedIOException e = new UncheckedIOException(root);

    SdkFailure copy = SdkFailure.of(e);

    assertThat(copy.toString())
        .isEqualTo("java.io.UncheckedIOException: java.io.IOException: reset; url ?sig=<hidden>");
    assertThat(copy.getStackTrace()).isEqualTo(e.getStackTrace());
    assertThat(copy.getCause())
        .isInstanceOf(SdkFailure.class)
        .hasToString("java.io.IOException: reset; url ?sig=<hidden>");
    assertThat(copy.getCause().getCause()).isNull();
  }
}
