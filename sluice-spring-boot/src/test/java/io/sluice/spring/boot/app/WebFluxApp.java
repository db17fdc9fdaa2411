package io.sluice.spring.boot.app;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** A WebFlux application: the same endpoints, reactive. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({LimitedService.class, WebFluxApp.Endpoints.class})
public class WebFluxApp {

    @RestController
    public static class Endpoints {
        private final LimitedService service;

        public Endpoints(LimitedService service) {
            this.service = service;
        }

        @GetMapping("/api/items/{id}")
        public Mono<String> item(@PathVariable("id") String id) {
            return Mono.just("item " + id);
        }

        @GetMapping("/bulk/{tenant}")
        public Mono<String> bulk(@PathVariable("tenant") String tenant) {
            return Mono.just("bulk " + tenant);
        }

        @GetMapping("/annotated")
        public Mono<String> annotated(@RequestParam("user") String user) {
            return service.mono(user);
        }
    }
}
