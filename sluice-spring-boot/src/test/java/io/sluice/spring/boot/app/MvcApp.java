package io.sluice.spring.boot.app;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** A servlet application: a few endpoints behind the filter, one calling a {@code @RateLimited} method. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({LimitedService.class, MvcApp.Endpoints.class})
public class MvcApp {

    @RestController
    public static class Endpoints {
        private final LimitedService service;

        public Endpoints(LimitedService service) {
            this.service = service;
        }

        @GetMapping("/api/items/{id}")
        public String item(@PathVariable("id") String id) {
            return "item " + id;
        }

        @GetMapping("/bulk/{tenant}")
        public String bulk(@PathVariable("tenant") String tenant) {
            return "bulk " + tenant;
        }

        @GetMapping("/open")
        public String open() {
            return "open";
        }

        @GetMapping("/annotated")
        public String annotated(@RequestParam("user") String user) {
            return service.plain(user);
        }
    }
}
