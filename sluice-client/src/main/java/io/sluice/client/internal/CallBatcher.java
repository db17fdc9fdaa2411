package io.sluice.client.internal;

import com.linecorp.armeria.common.AggregatedHttpResponse;
import com.linecorp.armeria.common.CommonPools;
import io.netty.channel.EventLoop;
import io.sluice.client.RemoteStoreException;
import io.sluice.client.RemoteUnavailableException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * How a remote store's calls reach the server: alone when the connection is quiet, together when it is busy.
 *
 * <pre>
 *   call ──▶ fewer than maxInFlight requests out? ──yes──▶ POST /v1/store/call, at once (a lone call waits for nothing)
 *                          │ no
 *                          ▼
 *                        queue ──(a request returns, or the queue holds maxCalls)──▶ POST /v1/store/calls
 * </pre>
 *
 * <p>Like Nagle's algorithm, but without a timer: a call waits only while {@code maxInFlight} requests are
 * already out, and then only until one of them returns, when everything queued (up to {@code maxCalls} calls and
 * {@link #MAX_BATCH_CHARS} characters) goes in one request. Under a steady load of N callers this settles at
 * {@code maxInFlight} requests of about N / maxInFlight calls each, so the server's per-request cost (an HTTP/2
 * stream, its headers, its context) is paid once per batch, not once per decision. {@code maxCalls} of 1 turns
 * batching off: every call in its own request, any number in flight.
 *
 * <p><b>Outcomes</b> stay per call: each call completes with its own {@link Reply} (status and body, as it would
 * have been answered alone), and the caller reads it as before. A request that fails (unreachable, reset) fails
 * each call it carried with the same {@link RemoteUnavailableException}. A batch whose envelope the server refuses
 * whole (404/405: a server without {@code /v1/store/calls}; 400 or 413: more calls or bytes than it takes)
 * decided nothing, so its calls are sent again, each alone, and later batches are made smaller (halved; off for
 * a 404 or 405). No other answer is ever sent twice.
 *
 * <p><b>Timeouts</b> stay per call: each call has the store's timeout from when it was made. A queued call whose
 * time runs out before it can be sent fails without being sent; a batch's request is given the time its newest
 * call has left, and a timer fails its older calls at their own deadlines (once a call has gone out, it may
 * still be decided on the server, at most once, as a timed-out single call may).
 *
 * <p><b>Thread safety:</b> any number of threads; the queue and the count of requests out are guarded by one
 * lock held only to add or take calls, never while sending or completing.
 */
final class CallBatcher {

    /**
     * The most characters of calls in one batch: at most three UTF-8 bytes each, so a batch stays below the
     * server's default {@code --max-body-bytes} of 65,536 whatever its keys.
     */
    static final int MAX_BATCH_CHARS = 16_384;

    /** Below this spread of deadlines in one batch (all of a healthy batch), the request's own timeout suffices. */
    private static final long TIMER_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private static final System.Logger log = System.getLogger(CallBatcher.class.getName());

    /** One POST; the future fails only when no answer came (unreachable, timed out), never for a status. */
    @FunctionalInterface
    interface Poster {
        CompletableFuture<AggregatedHttpResponse> post(boolean batch, String body, long timeoutNanos);
    }

    /** A call: its body, its deadline ({@link System#nanoTime}) and its caller's future. */
    private static final class Pending {
        final String body;
        final long deadline;
        final CompletableFuture<Reply> reply = new CompletableFuture<>();

        Pending(String body, long deadline) {
            this.body = body;
            this.deadline = deadline;
        }
    }

    private final Poster poster;
    private final String where;
    private final Duration timeout;
    private final long timeoutNanos;
    private final int maxInFlight;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}, as are the fields below it. */
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int queuedChars;
    private int inFlight;
    /** Lowered when the server refuses a batch whole. */
    private int maxCalls;
    private boolean closed;

    /**
     * @param where       the server, for messages
     * @param timeout     each call's time, from when it is made
     * @param maxInFlight requests out before calls wait to go together
     * @param maxCalls    the most calls in one request; 1 sends every call alone
     */
    CallBatcher(Poster poster, String where, Duration timeout, int maxInFlight, int maxCalls) {
        this.poster = poster;
        this.where = where;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.maxInFlight = maxInFlight;
        this.maxCalls = maxCalls;
    }

    /** Sends one call's body, alone or in a batch; completes with the server's answer to that call. */
    CompletableFuture<Reply> exchange(String body) {
        Pending p = new Pending(body, System.nanoTime() + timeoutNanos);
        List<Pending> batch = null;
        List<Pending> expired = null;
        boolean alone;
        synchronized (lock) {
            if (closed) {
                return CompletableFuture.failedFuture(new IllegalStateException("the remote store is closed"));
            }
            alone = maxCalls == 1 || inFlight < maxInFlight;
            if (alone) {
                inFlight++;
            } else {
                queue.add(p);
                queuedChars += body.length();
                if (queue.size() >= maxCalls || queuedChars >= MAX_BATCH_CHARS) {
                    // A full batch is worth its request whatever is out already.
                    expired = new ArrayList<>(0);
                    batch = take(expired);
                    if (!batch.isEmpty()) {
                        inFlight++;
                    }
                }
            }
        }
        if (alone) {
            sendAlone(p);
        } else if (batch != null) {
            expire(expired);
            if (!batch.isEmpty()) {
                send(batch);
            }
        }
        return p.reply;
    }

    /** Fails every queued call: the store is closing (its requests out fail as its connection closes). */
    void close() {
        List<Pending> left;
        synchronized (lock) {
            closed = true;
            left = new ArrayList<>(queue);
            queue.clear();
            queuedChars = 0;
        }
        for (Pending p : left) {
            p.reply.completeExceptionally(new IllegalStateException("the remote store is closed"));
        }
    }

    /** Takes the next batch off the queue; calls already past their deadline go to {@code expired} instead. */
    private List<Pending> take(List<Pending> expired) {
        long now = System.nanoTime();
        List<Pending> out = new ArrayList<>(Math.min(queue.size(), maxCalls));
        int chars = 0;
        Pending p;
        while (out.size() < maxCalls && (p = queue.peek()) != null) {
            if (!out.isEmpty() && chars + p.body.length() > MAX_BATCH_CHARS) {
                break;
            }
            queue.poll();
            queuedChars -= p.body.length();
            if (p.deadline - now <= 0) {
                expired.add(p);
            } else {
                out.add(p);
                chars += p.body.length();
            }
        }
        return out;
    }

    /** A request ended: its slot goes to what has queued meanwhile. */
    private void ended() {
        List<Pending> next = null;
        List<Pending> expired = new ArrayList<>(0);
        synchronized (lock) {
            inFlight--;
            while (!queue.isEmpty() && inFlight < maxInFlight) {
                next = take(expired);
                if (!next.isEmpty()) {
                    inFlight++;
                    break;
                }
            }
        }
        expire(expired);
        if (next != null && !next.isEmpty()) {
            send(next);
        }
    }

    private void send(List<Pending> calls) {
        if (calls.size() == 1) {
            sendAlone(calls.get(0));
        } else {
            sendBatch(calls);
        }
    }

    private void sendAlone(Pending p) {
        long left = p.deadline - System.nanoTime();
        if (left <= 0) {
            p.reply.completeExceptionally(timedOut());
            ended();
            return;
        }
        poster.post(false, p.body, left).whenComplete((r, e) -> {
            if (e != null) {
                p.reply.completeExceptionally(e);
            } else {
                p.reply.complete(new Reply(r.status().code(), r.content().array()));
            }
            ended();
        });
    }

    private void sendBatch(List<Pending> calls) {
        Pending newest = calls.get(calls.size() - 1);
        long now = System.nanoTime();
        List<String> bodies = new ArrayList<>(calls.size());
        for (Pending p : calls) {
            bodies.add(p.body);
        }
        Deadlines deadlines = newest.deadline - calls.get(0).deadline > TIMER_SLACK_NANOS ? new Deadlines(calls)
                : null;
        poster.post(true, BatchProtocol.calls(bodies), Math.max(1, newest.deadline - now)).whenComplete((r, e) -> {
            if (deadlines != null) {
                deadlines.cancel();
            }
            if (e != null) {
                for (Pending p : calls) {
                    p.reply.completeExceptionally(e);
                }
            } else {
                answered(calls, r);
            }
            ended();
        });
    }

    private void answered(List<Pending> calls, AggregatedHttpResponse r) {
        int status = r.status().code();
        if (status == 200) {
            Reply[] replies;
            try {
                replies = BatchProtocol.replies(r.content().array(), calls.size());
            } catch (RemoteStoreException unreadable) {
                // Decided or not, nobody knows: never sent again.
                for (Pending p : calls) {
                    p.reply.completeExceptionally(unreadable);
                }
                return;
            }
            for (int i = 0; i < replies.length; i++) {
                calls.get(i).reply.complete(replies[i]);
            }
        } else if (status == 400 || status == 404 || status == 405 || status == 413) {
            refused(calls, status, Protocol.errorMessage(r.contentUtf8()));
        } else {
            // The request as a whole was answered (401 without the token, 503 while the server stops, ...): each
            // call is answered so, as it would have been alone.
            Reply whole = new Reply(status, r.content().array());
            for (Pending p : calls) {
                p.reply.complete(whole);
            }
        }
    }

    /** The server refused the envelope and decided nothing: smaller batches from now on, these calls alone. */
    private void refused(List<Pending> calls, int status, String message) {
        int now;
        synchronized (lock) {
            maxCalls = status == 404 || status == 405 ? 1 : Math.max(1, Math.min(maxCalls, calls.size() / 2));
            now = maxCalls;
            inFlight += calls.size();
        }
        log.log(System.Logger.Level.WARNING, "{0} refused a batch of {1} calls ({2}: {3}); it is sent again one call"
                + " per request, and {4}", where, calls.size(), status, message, now == 1
                ? "calls are no longer batched" : "batches now carry at most " + now + " calls");
        for (Pending p : calls) {
            sendAlone(p);
        }
    }

    private void expire(List<Pending> expired) {
        for (Pending p : expired) {
            p.reply.completeExceptionally(timedOut());
        }
    }

    private RemoteUnavailableException timedOut() {
        return new RemoteUnavailableException(where + " did not answer within " + timeout, null);
    }

    /**
     * Fails the calls of one batch at their own deadlines, oldest first, while the batch is unanswered; the
     * newest is left to the request's timeout. One timer at a time, on Armeria's shared event loops.
     */
    private final class Deadlines implements Runnable {
        private final List<Pending> calls;
        private final EventLoop loop = CommonPools.workerGroup().next();
        private int next;
        private volatile boolean over;
        private volatile ScheduledFuture<?> timer;

        Deadlines(List<Pending> calls) {
            this.calls = calls;
            schedule();
        }

        private void schedule() {
            timer = loop.schedule(this, Math.max(0, calls.get(next).deadline - System.nanoTime()),
                    TimeUnit.NANOSECONDS);
        }

        @Override
        public void run() {
            if (over) {
                return;
            }
            long now = System.nanoTime();
            int last = calls.size() - 1;
            while (next < last && calls.get(next).deadline - now <= 0) {
                calls.get(next++).reply.completeExceptionally(timedOut());
            }
            if (next < last && !over) {
                schedule();
            }
        }

        void cancel() {
            over = true;
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
            }
        }
    }
}
