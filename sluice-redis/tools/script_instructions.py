#!/usr/bin/env python3
"""Machine instructions per decision that redis-server spends on Sluice's script, counted by valgrind's callgrind.

Usage, from the repository root after `mvn -q -o -pl sluice-redis -am -DskipTests package`:

    python3 sluice-redis/tools/script_instructions.py [SCRIPT.lua] [CASE ...]

Without SCRIPT.lua it measures the script SluiceScript assembles from sluice-redis/target/classes. It starts
redis-server under callgrind on 127.0.0.1:$PORT (default 7391), loads the script and the bench's bare token-bucket
script, and for each case: sends 150 calls to warm up (and to drain the bucket of the rejecting cases), zeroes
the counters, sends N calls ($N, default 400) on one connection, 16 pipelined at a time, dumps the counters and
prints the instructions per decision. Every call carries a new request id, as the store's calls do. Counts
repeat to within about 0.5% whatever else the machine runs, so they are the figure to compare script versions
with (docs/coalesced-mode.md, "Redis CPU per decision").

Cases: tb_reject, tb_admit, gcra_reject, gcra_admit, fw_reject, fw_admit (token_bucket, gcra, fixed_window
with limits under which every measured call rejects, or admits and writes), tb_reject_b64 (coalesced mode: one
batch call of 64 requests, per decision), bare (the bench's bare-lua script).
"""
import base64, glob, hashlib, os, re, socket, subprocess, sys, tempfile, time

PORT = int(os.environ.get("PORT", "7391"))
N = int(os.environ.get("N", "400"))
DEPTH = 16

# (algorithm, parameter words): capacity 100 refilled by 1 token an hour rejects every call after the first 100;
# a capacity of 10^12 admits every call.
LIMITS = {
    "tb_reject": ("token_bucket", "100 1 3600000000 greedy 100"),
    "tb_admit": ("token_bucket", "1000000000000 1000 1000000 greedy 1000000000000"),
    "gcra_reject": ("gcra", "1 3600000000 100"),
    "gcra_admit": ("gcra", "1000000000 1000000 1000000000"),
    "fw_reject": ("fixed_window", "100 3600000000 epoch 0"),
    "fw_admit": ("fixed_window", "1000000000000 3600000000 epoch 0"),
}

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
        System.out.print(io.sluice.redis.internal.SluiceScript.get().source());
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


def assembled_script():
    classes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "classes")
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "PrintScript.java")
        with open(source, "w") as f:
            f.write(PRINT_SCRIPT)
        return subprocess.run(["java", "-cp", classes, source], check=True, capture_output=True,
                              text=True).stdout


def main():
    args = sys.argv[1:]
    if args and args[0].endswith(".lua"):
        script = open(args.pop(0)).read()
    else:
        script = assembled_script()
    cases = args or ["tb_reject", "tb_admit", "gcra_reject", "gcra_admit", "fw_reject", "fw_admit",
                     "tb_reject_b64", "bare"]
    out = os.path.join(tempfile.gettempdir(), "sluice-callgrind.%d" % PORT)
    for f in glob.glob(out + ".*"):
        os.remove(f)
    server = subprocess.Popen(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p",
                               "redis-server", "--port", str(PORT), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sequence = [0]

    def sluice_call(sha, case, batch):
        algorithm, words = LIMITS[case]
        sequence[0] += 1
        request_id = "q3VbA9kP2mXw7YtR5nLc0g.%x" % sequence[0]
        keys = ["sluice:{bench:hot-key}:" + case, "sluice:{bench:hot-key}:r:" + request_id]
        head = ["batch", str(batch), "0"] if batch else ["try", "1", "0"]
        argv = head + ["", request_id, "3000", "1", algorithm, fingerprint(algorithm, words), words]
        if batch:
            argv += ["try", "1", "0"] * batch
        return ["EVALSHA", sha, str(len(keys))] + keys + argv

    try:
        connection = Connection()
        sha = connection.call("SCRIPT", "LOAD", script)
        bare_sha = connection.call("SCRIPT", "LOAD", BARE)
        for case in cases:
            per_call = 1
            if case == "bare":
                make = lambda: ["EVALSHA", bare_sha, "1", "bare:hot-key", "100", "0.001", "101000"]
            elif case.endswith("_b64"):
                per_call = 64
                make = lambda case=case: sluice_call(sha, case[:-4], 64)
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
            shown = last[:9] if isinstance(last, list) else last
            print("%-14s %9.0f instructions per decision   (last reply %s)" % (case, total / calls / per_call, shown),
                  flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
