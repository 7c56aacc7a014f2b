package dev.baton.azureblob;

import com.azure.core.http.HttpHeaderName;
import com.azure.core.http.HttpPipelineCallContext;
import com.azure.core.http.HttpPipelineNextPolicy;
import com.azure.core.http.HttpPipelineNextSyncPolicy;
import com.azure.core.http.HttpPipelinePosition;
import com.azure.core.http.HttpResponse;
import com.azure.core.http.policy.HttpPipelinePolicy;
import reactor.core.publisher.Mono;

/**
 * Takes the Content-Length header off each request just before it is sent. The JDK's HttpClient
 * computes that header itself and refuses a caller's, and the Azure adapter for it logs a warning
 * for every request that carries one: thousands of lines an hour for an elector that renews every
 * few seconds. The store's requests have no body or a byte array, whose length the JDK client
 * knows; the shared-key signature signs a length of 0 and a missing one alike.
 */
final class ContentLengthForJdkClient implements HttpPipelinePolicy {

  @Override
  public Mono<HttpResponse> process(HttpPipelineCallContext context, HttpPipelineNextPolicy next) {
    dropContentLength(context);
    return next.process();
  }

  @Override
  public HttpResponse processSync(
      HttpPipelineCallContext context, HttpPipelineNextSyncPolicy next) {
    dropContentLength(context);
    return next.processSync();
  }

  private static void dropContentLength(HttpPipelineCallContext context) {
    if (context.getHttpRequest().getBodyAsBinaryData() == null) {
      context.getHttpRequest().getHeaders().remove(HttpHeaderName.CONTENT_LENGTH);
    }
  }

  @Override
  public HttpPipelinePosition getPipelinePosition() {
    return HttpPipelinePosition.PER_RETRY;
  }
}
