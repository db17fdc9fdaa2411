package io.sluice.examples.mvc;

import io.sluice.spring.boot.RateLimited;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The example: {@code GET /api/hello} is limited by the filter route of application.yaml (rule {@code api}, per
 * client address), {@code POST /login} by {@link RateLimited} on {@link Logins#login} (rule {@code login}, per
 * user name).
 */
@SpringBootApplication
public class ExampleApplication {

    public static void main(String[] args) {
        SpringApplication.run(ExampleApplication.class, args);
    }

    @RestController
    static class Endpoints {
        private final Logins logins;

        Endpoints(Logins logins) {
            this.logins = logins;
        }

        @GetMapping("/api/hello")
        String hello() {
            return "hello\n";
        }

        @PostMapping("/login")
        String login(@RequestParam("user") String user) {
            return logins.login(user);
        }
    }

    @Service
    static class Logins {
        @RateLimited(rule = "login", key = "#user")
        public String login(String user) {
            return "welcome " + user + "\n";
        }
    }
}
