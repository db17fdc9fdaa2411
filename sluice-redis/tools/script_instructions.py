#!/usr/bin/env python3
"""Machine instructions per decision that redis-server spends on Sluice's script, counted by valgrind's callgrind.

Usage, from the repository root after `mvn -q -B -pl sluice-redis -am -DskipTests package`:

    python3 sluice-redis/tools/script_instructions.py [--eval] [FILE.lua] [CASE ...]

It measures what the store runs: by default the functions library SluiceScript assembles from
sluice-redis/target/classes, called with FCALL (the store's default on Redis 7); with --eval the script, called
with EVALSHA. FILE.lua replaces it: a functions library when its first line is `#!lua`, else a script (so a
library saved before a change, e.g. with --save FILE.lua, can be measured beside the one after it). It starts
redis-server under callgrind on 127.0.0.1:$PORT (default 7391), loads the library or script and the bench's bare
token-bucket script, and for each case: sends 150 calls to warm up (and to drain the bucket of the rejecting
cases), zeroes the counters, sends N calls ($N, default 400) on one connection, 16 pipelined at a time, dumps the
counters and prints the instructions per decision, without those of serverCron (which runs 10 times a second of
wall-clock time, so its share grows with the machine's load). Every call carries a new request id, as the store's
calls do. Counts repeat to within about 0.5% whatever else the machine runs, so they are the figure to compare script
versions with (docs/coalesced-mode.md, "Redis CPU per decision"; docs/redis-script-protocol.md, "Instruction
counts").

Cases (CASES lists them): tb_reject, tb_admit, gcra_reject, gcra_admit, fw_reject, fw_admit (token_bucket, gcra,
fixed_window with limits under which every measured call rejects, or admits and writes), tb_reject_b64 (coalesced
mode: one batch call of 64 requests, per decision), bare (the bench's bare-lua script); <case>_b<N> for any case
of LIMITS (the batch form, N requests of one key per call, per decision; `batch` runs tb_admit, gcra_admit,
tb_reject1 and gcra_reject1 each alone and in batches of 10: coalesced mode against plain mode); and the rows of the
protocol page's table: <alg>_admit10k (every call on a new key of 10,000, the benchmark's limit of 1,000 per
second with bursts of 100: it admits and writes), <alg>_reject1 (one hot key of capacity 1 and one token a day:
after the first call every call rejects and writes nothing), <alg>3_... the same with a rule of three limits (the
limit and two looser ones, 60 times the rate per minute and 3,600 times per hour, as the benchmark's
three_limits rows), for <alg> tb (token_bucket) and gcra, and bare_admit10k / bare_reject1 (the bare script with
the same limits). `table` runs those rows.
"""
import base64, glob, hashlib, os, re, socket, subprocess, sys, tempfile, time

PORT = int(os.environ.get("PORT", "7391"))
N = int(os.environ.get("N", "400"))
DEPTH = 16

# (algorithm, parameter words): capacity 100 refilled by 1 token an hour rejects every call after the first 100;
# a capacity of 10^12 admits every call.
LIMITS = {
    "tb_reject": [("token_bucket", "100 1 3600000000 greedy 100")],
    "tb_admit": [("token_bucket", "1000000000000 1000 1000000 greedy 1000000000000")],
    "gcra_reject": [("gcra", "1 3600000000 100")],
    "gcra_admit": [("gcra", "1000000000 1000000 1000000000")],
    "fw_reject": [("fixed_window", "100 3600000000 epoch 0")],
    "fw_admit": [("fixed_window", "1000000000000 3600000000 epoch 0")],
}

# The protocol page's rows (docs/redis-script-protocol.md, "Instruction counts"): (burst, rate, period in µs) of
# the limit, scaled 60 times per minute and 3,600 times per hour for the two looser limits of a rule of three.
ADMIT = (100, 1000, 1000000)     # RedisLimits: TokenBucket.of(100, 1000, 1 s), Gcra.of(1000, 1 s).withBurst(100)
REJECT = (1, 1, 86400000000)     # capacity 1, one token a day


def words(algorithm, burst, rate, period):
    if algorithm == "token_bucket":
        return "%d %d %d greedy %d" % (burst, rate, period, burst)
    return "%d %d %d" % (rate, period, burst)


def rule(algorithm, limit, limits):
    burst, rate, period = limit
    scales = [1, 60, 3600][:limits]
    return [(algorithm, words(algorithm, burst * k, rate * k, period * k)) for k in scales]


KEYS_OF = {}   # case -> how many keys its calls cycle through (1: one hot key)
for short, algorithm in (("tb", "token_bucket"), ("gcra", "gcra")):
    for limits, suffix in ((1, ""), (3, "3")):
        LIMITS["%s%s_admit10k" % (short, suffix)] = rule(algorithm, ADMIT, limits)
        KEYS_OF["%s%s_admit10k" % (short, suffix)] = 10000
        LIMITS["%s%s_reject1" % (short, suffix)] = rule(algorithm, REJECT, limits)
TABLE = ["bare_admit10k", "tb_admit10k", "tb3_admit10k", "gcra_admit10k", "gcra3_admit10k",
         "bare_reject1", "tb_reject1", "tb3_reject1", "gcra_reject1", "gcra3_reject1"]
# Coalesced mode's rows: one hot key, the batch form deciding B requests per call (CASE_bB, per decision), beside
# the same limit decided one call per decision. `batch` runs them.
BATCH = ["tb_admit", "tb_admit_b10", "gcra_admit", "gcra_admit_b10", "tb_reject1", "tb_reject1_b10",
         "gcra_reject1", "gcra_reject1_b10"]
CASES = list(LIMITS) + ["tb_reject_b64", "bare", "bare_admit10k", "bare_reject1"] + [c for c in BATCH if "_b" in c]

# The bench's bare-lua contender, for scale: read from sluice-bench's BareLuaContender.SCRIPT (its string
# literals joined by newlines), so the two never differ.
def bare_script():
    java = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sluice-bench", "src", "main",
                        "java", "io", "sluice", "bench", "redis", "BareLuaContender.java")
    with open(java, encoding="utf-8") as f:
        text = f.read()
    block = text[text.index("SCRIPT = String.join("):]
    block = block[:block.index(");")]
    return "\n".join(re.findall(r'"((?:[^"\\]|\\.)*)"', block)[1:])

BARE = bare_script()

PRINT_SCRIPT = """
public class PrintScript {
    public static void main(String[] args) {
        io.sluice.redis.internal.SluiceScript script = io.sluice.redis.internal.SluiceScript.get();
        System.out.print(args.length > 0 ? script.source() : script.functionLibrary());
    }
}
"""


def fingerprint(algorithm, words):
    """LimitParams.fingerprint: the first 36 bits of SHA-256 of "<algorithm> <words>", 6 base64url characters."""
    digest = hashlib.sha256((algorithm + " " + words).encode()).digest()[:6]
    return base64.urlsafe_b64encode(digest).decode()[:6]


def resp(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        b = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class Connection:
    def __init__(self):
        for _ in range(300):
            try:
                self.sock = socket.create_connection(("127.0.0.1", PORT))
                break
            except OSError:
                time.sleep(0.1)
        else:
            raise RuntimeError("redis-server did not start on port %d" % PORT)
        self.file = self.sock.makefile("rb")

    def read(self):
        line = self.file.readline()
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.file.read(n + 2)[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("unexpected reply %r" % line)

    def call(self, *args):
        self.sock.sendall(resp(list(args)))
        return self.read()

    def pipelined(self, calls):
        last = None
        for i in range(0, len(calls), DEPTH):
            chunk = calls[i:i + DEPTH]
            self.sock.sendall(b"".join(resp(c) for c in chunk))
            for _ in chunk:
                last = self.read()
        return last


def assembled_script(eval_script):
    """The functions library (or with eval_script the script) SluiceScript assembles from target/classes."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    classes = os.pathsep.join(os.path.join(root, module, "target", "classes") for module in ("sluice-redis", "sluice-core"))
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "PrintScript.java")
        with open(source, "w") as f:
            f.write(PRINT_SCRIPT)
        return subprocess.run(["java", "-cp", classes, source] + (["script"] if eval_script else []), check=True,
                              capture_output=True, text=True).stdout


def main():
    args = sys.argv[1:]
    eval_script = "--eval" in args
    args = [a for a in args if a != "--eval"]
    if args and args[0] == "--save":
        with open(args[1], "w") as f:
            f.write(assembled_script(eval_script))
        return
    if args and args[0].endswith(".lua"):
        script = open(args.pop(0)).read()
    else:
        script = assembled_script(eval_script)
    functions = script.startswith("#!lua")
    for case in args:
        if case not in ("table", "batch") and case not in CASES and re.sub(r"_b\d+$", "", case) not in LIMITS:
            raise SystemExit("unknown case %s; cases: %s, table, batch" % (case, ", ".join(CASES)))
    cases = []
    for case in args or ["tb_reject", "tb_admit", "gcra_reject", "gcra_admit", "fw_reject", "fw_admit",
                         "tb_reject_b64", "bare"]:
        cases += TABLE if case == "table" else BATCH if case == "batch" else [case]
    out = os.path.join(tempfile.gettempdir(), "sluice-callgrind.%d" % PORT)
    for f in glob.glob(out + ".*"):
        os.remove(f)
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p",
                               "redis-server", "--port", str(PORT), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sequence = [0]

    def sluice_call(sha, case, batch):
        limits = LIMITS[case]
        sequence[0] += 1
        request_id = "q3VbA9kP2mXw7YtR5nLc0g.%x" % sequence[0]
        keys_of = KEYS_OF.get(case, 1)
        # The benchmark's key names (sluice:{bench:user:NNNN}:<limit>); one hot key when keys_of is 1.
        tag = "bench:user:%d" % (sequence[0] % keys_of) if keys_of > 1 else "bench:hot-key"
        names = [case] if len(limits) == 1 else [case, case + "_per_minute", case + "_per_hour"]
        keys = ["sluice:{%s}:%s" % (tag, name) for name in names] + ["sluice:{%s}:r:%s" % (tag, request_id)]
        head = ["batch", str(batch), "0"] if batch else ["try", "1", "0"]
        argv = head + ["", request_id, "3000", str(len(limits))]
        for algorithm, words in limits:
            argv += [algorithm, fingerprint(algorithm, words), words]
        if batch:
            argv += ["try", "1", "0"] * batch
        if functions:
            return ["FCALL", sha, str(len(keys))] + keys + argv
        return ["EVALSHA", sha, str(len(keys))] + keys + argv

    def bare_call(bare_sha, case):
        burst, rate, period = ADMIT if case == "bare_admit10k" else REJECT
        sequence[0] += 1
        key = "user:%d" % (sequence[0] % 10000) if case == "bare_admit10k" else "bare:hot-key"
        per_second = rate * 1e6 / period
        # BareLuaContender's TTL: until the bucket would be full again, plus a second.
        ttl = int(-(-burst * 1000 // per_second)) + 1000
        return ["EVALSHA", bare_sha, "1", key, str(burst), repr(per_second), str(ttl)]

    try:
        connection = Connection()
        if functions:
            connection.call("FUNCTION", "LOAD", "REPLACE", script)
            sha = re.match(r"#!lua name=(\S+)", script).group(1)
        else:
            sha = connection.call("SCRIPT", "LOAD", script)
        bare_sha = connection.call("SCRIPT", "LOAD", BARE)
        print("%s, redis-server %s" % ("FCALL " + sha if functions else "EVALSHA " + sha,
                                       connection.call("INFO", "server").split("redis_version:")[1].split()[0]))
        for case in cases:
            per_call = 1
            if case == "bare":
                make = lambda: ["EVALSHA", bare_sha, "1", "bare:hot-key", "100", "0.001", "101000"]
            elif case.startswith("bare_"):
                make = lambda case=case: bare_call(bare_sha, case)
            elif re.search(r"_b\d+$", case):
                base, size = re.match(r"(.*)_b(\d+)$", case).groups()
                per_call = int(size)
                make = lambda base=base, per_call=per_call: sluice_call(sha, base, per_call)
            else:
                make = lambda case=case: sluice_call(sha, case, 0)
            connection.pipelined([make() for _ in range(150)])
            connection.call("PING")
            subprocess.run(["callgrind_control", "-z", str(server.pid)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            calls = max(1, N // per_call * (4 if per_call > 1 else 1))
            last = connection.pipelined([make() for _ in range(calls)])
            subprocess.run(["callgrind_control", "-d", case, str(server.pid)], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            dump = sorted(glob.glob(out + ".*"), key=os.path.getmtime)[-1]
            total = None
            with open(dump) as f:
                for line in f:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        total = int(line.split()[1])
            # serverCron runs 10 times a second of wall-clock time, and under valgrind a call takes thousands of
            # times longer, so its share depends on how loaded the machine is: it is left out of the figure.
            cron = 0
            annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", dump],
                                       capture_output=True, text=True).stdout
            for line in annotated.splitlines():
                if re.search(r":serverCron \[", line):
                    cron = int(line.split()[0].replace(",", ""))
            shown = last[:9] if isinstance(last, list) else last
            print("%-14s %9.0f instructions per decision (serverCron left out: %6.0f)   (last reply %s)"
                  % (case, (total - cron) / calls / per_call, cron / calls / per_call, shown), flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
