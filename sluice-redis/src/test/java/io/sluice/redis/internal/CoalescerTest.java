package io.sluice.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The queueing of coalesced mode, with calls the test answers by hand. */
class CoalescerTest {

    /** Calls sent, each with the future the test completes to answer it. */
    private final List<List<Integer>> sent = new CopyOnWriteArrayList<>();
    private final List<CompletableFuture<Void>> answers = new CopyOnWriteArrayList<>();

    private CompletableFuture<?> send(List<Integer> batch) {
        sent.add(List.copyOf(batch));
        CompletableFuture<Void> answer = new CompletableFuture<>();
        answers.add(answer);
        return answer;
    }

    @Test
    void aLoneRequestGoesAtOnceAndTheOnesThatQueuedGoTogetherInArrivalOrder() {
        Coalescer<Integer> coalescer = new Coalescer<>(128, this::send);
        coalescer.submit("k", 1);
        assertThat(sent).containsExactly(List.of(1));
        for (int i = 2; i <= 5; i++) {
            coalescer.submit("k", i);
        }
        coalescer.submit("other", 100);
        assertThat(sent).as("queued behind the call in flight; another target is not").containsExactly(List.of(1),
                List.of(100));

        answers.get(0).complete(null);
        assertThat(sent).containsExactly(List.of(1), List.of(100), List.of(2, 3, 4, 5));
        assertThat(coalescer.targetsInFlight()).isEqualTo(2);

        answers.get(2).complete(null);
        answers.get(1).complete(null);
        assertThat(coalescer.targetsInFlight()).as("idle targets leave").isZero();
        coalescer.submit("k", 6);
        assertThat(sent.get(sent.size() - 1)).as("nothing in flight: at once again").isEqualTo(List.of(6));
    }

    @Test
    void moreThanMaxBatchBecomeSeveralCallsInOrderAndTheNextRoundWaitsForAllOfThem() {
        Coalescer<Integer> coalescer = new Coalescer<>(3, this::send);
        coalescer.submit("k", 0);
        for (int i = 1; i <= 7; i++) {
            coalescer.submit("k", i);
        }
        answers.get(0).complete(null);
        assertThat(sent).containsExactly(List.of(0), List.of(1, 2, 3), List.of(4, 5, 6), List.of(7));
        coalescer.submit("k", 8);
        answers.get(1).complete(null);
        answers.get(3).complete(null);
        assertThat(sent).as("one call of the round is still in flight").hasSize(4);
        answers.get(2).complete(null);
        assertThat(sent.get(4)).isEqualTo(List.of(8));
    }

    @Test
    void aFailedCallDoesNotStallItsTarget() {
        Coalescer<Integer> coalescer = new Coalescer<>(128, this::send);
        coalescer.submit("k", 1);
        coalescer.submit("k", 2);
        answers.get(0).completeExceptionally(new IllegalStateException("Redis is down"));
        assertThat(sent).containsExactly(List.of(1), List.of(2));
        answers.get(1).complete(null);
        assertThat(coalescer.targetsInFlight()).isZero();
    }

    @Test
    void aSendThatThrowsDoesNotStallItsTarget() {
        AtomicInteger calls = new AtomicInteger();
        Coalescer<Integer> coalescer = new Coalescer<>(128, batch -> {
            calls.incrementAndGet();
            throw new IllegalStateException("bug");
        });
        coalescer.submit("k", 1);
        coalescer.submit("k", 2);
        assertThat(calls).hasValue(2);
        assertThat(coalescer.targetsInFlight()).isZero();
    }

    @Test
    void callsThatCompleteAtOnceAreDrainedWithoutRecursionAndHandedOffAfterAFewRounds() throws Exception {
        // An open circuit breaker answers before send returns. Every answer brings a new request (as a caller
        // retrying at once would): the thread that drains must not run forever nor grow its stack.
        List<Thread> drainers = new CopyOnWriteArrayList<>();
        AtomicInteger submitted = new AtomicInteger(1);
        CountDownLatch done = new CountDownLatch(1);
        Coalescer<Integer>[] holder = new Coalescer[1];
        holder[0] = new Coalescer<>(128, batch -> {
            drainers.add(Thread.currentThread());
            if (submitted.get() < 1_000) {
                holder[0].submit("k", submitted.incrementAndGet());
            } else {
                done.countDown();
            }
            return CompletableFuture.completedFuture(null);
        });
        holder[0].submit("k", 1);
        assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        long onCaller = drainers.stream().filter(t -> t == Thread.currentThread()).count();
        assertThat(onCaller).as("rounds run by the submitting thread").isLessThanOrEqualTo(16);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (holder[0].targetsInFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(holder[0].targetsInFlight()).isZero();
    }

    @Test
    void concurrentSubmittersLoseNothingAndKeepEachThreadsOrder() throws Exception {
        // The order in which calls are sent (a connection writes them in that order); answered on another thread.
        List<Integer> answered = new CopyOnWriteArrayList<>();
        Coalescer<Integer> coalescer = new Coalescer<>(16, batch -> {
            answered.addAll(batch);
            return CompletableFuture.runAsync(() -> { });
        });
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            Thread thread = new Thread(() -> {
                for (int i = 0; i < 2_000; i++) {
                    coalescer.submit("k", base + i);
                }
            });
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (answered.size() < 8_000 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(answered).hasSize(8_000).doesNotHaveDuplicates();
        for (int t = 0; t < 4; t++) {
            int base = t * 10_000;
            assertThat(answered.stream().filter(i -> i >= base && i < base + 10_000).toList())
                    .as("thread %d's requests in its order", t).isSorted();
        }
        while (coalescer.targetsInFlight() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertThat(coalescer.targetsInFlight()).isZero();
    }

    @Test
    void maxBatchMustBePositive() {
        assertThatThrownBy(() -> new Coalescer<Integer>(0, this::send)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("maxBatch must be at least 1, was 0");
    }
}
