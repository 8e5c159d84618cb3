package com.example.payments.testing;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * The JDK client of {@link Http}, checking every response it receives from a business listener against the OpenAPI
 * document ({@link OpenApiContract}): the check fails the test that made the request.
 */
final class ContractCheckingClient extends HttpClient {

    private final HttpClient client;

    ContractCheckingClient(HttpClient client) {
        this.client = client;
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        return checked(client.send(request, handler));
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
                                                            HttpResponse.BodyHandler<T> handler) {
        return client.sendAsync(request, handler).thenApply(ContractCheckingClient::checked);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                            HttpResponse.PushPromiseHandler<T> push) {
        return client.sendAsync(request, handler, push).thenApply(ContractCheckingClient::checked);
    }

    private static <T> HttpResponse<T> checked(HttpResponse<T> response) {
        Object body = response.body();
        String text = body instanceof String string ? string
                : body instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : null;
        OpenApiContract.check(response.request().method(), response.request().uri().getPort(),
                              response.request().uri().getRawPath(), response.statusCode(),
                              name -> response.headers().firstValue(name), text);
        return response;
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return client.cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return client.connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return client.followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return client.proxy();
    }

    @Override
    public SSLContext sslContext() {
        return client.sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return client.sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return client.authenticator();
    }

    @Override
    public Version version() {
        return client.version();
    }

    @Override
    public Optional<Executor> executor() {
        return client.executor();
    }
}
