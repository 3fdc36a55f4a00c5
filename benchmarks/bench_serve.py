"""`hierattn serve` under load, on loopback only (issue #41): readiness, throughput, latency, memory.

On one run (the default IMDB run), on this machine's cores, with `--texts` IMDB test reviews (a seeded
sample). The server runs as its own process (`python cli.py serve --run RUN --port 0`); the clients run
in this process on asyncio, each on one keep-alive connection sending one request after another (a raw
HTTP/1.1 client, so that the clients take little of the CPU the server needs). Every request goes to
127.0.0.1; every phase is bounded in time.

* ready: five cold starts, seconds from launching the process to the first 200 from /readyz (predictions),
  and to /readyz saying explanations are ready;
* baseline: the runtime in process (`Predictor.predict` on all `--texts` reviews at once, after a warm-up),
  timed in the same run: the throughput the server is compared with;
* load: 1, 8 and 32 clients sending one review per `/v1/predict` request for `--seconds` (60 s at 32):
  requests per second, errors, p50/p99 latency; the 32-client throughput as a ratio of the baseline;
* low load: one client, one request at a time: p50/p99 of `/v1/predict` (one review) and `/v1/explain`;
* memory (`--memory-minutes`, 0 to skip): 8 predict clients and 1 explain client for that long; the
  resident memory of the server and of its explanation worker every 10 s; growth after the first minute;
* load32 (instead of load, for studies of the batching with `--server-options`): the 32 clients only;
* in-process: the same 200 reviews explained without the server (`classifier.explain([text])` and its
  JSON, in this process, after the server has stopped): what the server adds to an explanation.

Usage:
    python benchmarks/bench_serve.py RUN_DIR [--texts 4000] [--seconds 20] [--seconds-32 60] [--memory-minutes 10]
        [--phases ready,baseline,low,load,memory,in-process] [--server-options "--batch-wait-ms 5"]
        [--data ../shared/datasets/aclImdb_v1.tar.gz] [--output results.json]
"""

import argparse
import asyncio
import json
import os
import pathlib
import random
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Server:
    """`python cli.py serve --run RUN --port 0`, its port read from its first log line."""

    def __init__(self, run, *options):
        self.started = time.perf_counter()
        command = [sys.executable, str(ROOT / "cli.py"), "serve", "--run", str(run), "--port", "0", *options]
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        self.lines = []
        found = threading.Event()

        def read():
            for line in self.process.stderr:
                self.lines.append(line.rstrip())
                if " on http://" in line:
                    found.set()
            found.set()

        threading.Thread(target=read, daemon=True).start()
        found.wait(120)
        match = next((re.search(r"http://([\d.]+):(\d+)/", line) for line in self.lines if "http://" in line), None)
        if not match:
            raise SystemExit("the server did not start:\n" + "\n".join(self.lines))
        self.host, self.port = match.group(1), int(match.group(2))

    def get(self, path):
        try:
            with urllib.request.urlopen(f"http://{self.host}:{self.port}{path}", timeout=10) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())
        except OSError:
            return None, None

    def wait(self, condition, timeout=300):
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            status, body = self.get("/readyz")
            if status == 200 and condition(body):
                return time.perf_counter() - self.started
            time.sleep(0.02)
        raise SystemExit("the server did not get ready:\n" + "\n".join(self.lines))

    def rss_mb(self):
        """Resident MB of the server and of each of its children (the explanation worker and multiprocessing's tracker)."""
        pids = [self.process.pid]
        for task in pathlib.Path(f"/proc/{self.process.pid}/task").iterdir():
            pids += [int(child) for child in (task / "children").read_text().split()]
        return [_rss_mb(pid) for pid in pids]

    def stop(self):
        self.process.terminate()
        return self.process.wait(60)


def _rss_mb(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _client(host, port, path, bodies, start, stop_at, results):
    """One keep-alive connection sending requests one after another until `stop_at`."""
    reader, writer = await asyncio.open_connection(host, port)
    index = start
    try:
        while time.perf_counter() < stop_at:
            body = bodies[index % len(bodies)]
            index += 1
            sent = time.perf_counter()
            writer.write(
                b"POST %s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (path, len(body), body)
            )
            status = int((await reader.readline()).split()[1])
            length = 0
            while (line := await reader.readline()) != b"\r\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            await reader.readexactly(length)
            results.append((time.perf_counter() - sent, status))
    finally:
        writer.close()


def load(server, path, bodies, clients, seconds):
    """`clients` connections for `seconds`: requests/s, errors, latency percentiles (ms)."""
    results = []

    async def run():
        stop_at = time.perf_counter() + seconds
        starts = [i * len(bodies) // clients for i in range(clients)]
        await asyncio.gather(*(_client(server.host, server.port, path, bodies, s, stop_at, results) for s in starts))

    started = time.perf_counter()
    asyncio.run(run())
    took = time.perf_counter() - started
    return summary(results, took) | {"clients": clients}


def summary(results, seconds):
    latencies = sorted(latency for latency, _ in results)
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return {
        "requests": len(results),
        "errors": sum(status != 200 for _, status in results),
        "seconds": round(seconds, 1),
        "per_second": round(len(results) / seconds, 1),
        "p50_ms": round(q[49] * 1000, 2),
        "p99_ms": round(q[98] * 1000, 2),
    }


def sequential(server, path, bodies, count):
    """One client, one request at a time, `count` requests (after 5 warm-up ones)."""
    load(server, path, bodies[-5:], 1, 0.5)
    results = []

    async def run():
        await _client(server.host, server.port, path, bodies[:count], 0, float("inf"), _Limited(results, count))

    started = time.perf_counter()
    try:
        asyncio.run(run())
    except _Enough:
        pass
    return summary(results, time.perf_counter() - started)


class _Enough(Exception):
    pass


class _Limited(list):
    """A result list that ends the client once it holds `count` results."""

    def __init__(self, target, count):
        super().__init__()
        self.target, self.count = target, count

    def append(self, item):
        self.target.append(item)
        if len(self.target) >= self.count:
            raise _Enough()


def readiness(run, times=5):
    predict, explain = [], []
    for _ in range(times):
        server = Server(run)
        predict.append(server.wait(lambda body: body["predict"]))
        explain.append(server.wait(lambda body: body["explain"] == "ready"))
        server.stop()
    return {
        "predict_median_seconds": round(statistics.median(predict), 3),
        "predict_seconds": [round(s, 3) for s in predict],
        "explain_median_seconds": round(statistics.median(explain), 2),
    }


def memory(server, predict_bodies, explain_bodies, minutes):
    """8 predict clients and 1 explain client for `minutes`; resident MB every 10 s."""
    samples, results, explained = [], [], []

    async def run():
        stop_at = time.perf_counter() + minutes * 60
        clients = [
            _client(server.host, server.port, b"/v1/predict", predict_bodies, i * 97, stop_at, results)
            for i in range(8)
        ]
        clients.append(_client(server.host, server.port, b"/v1/explain", explain_bodies, 0, stop_at, explained))

        async def sample():
            while time.perf_counter() < stop_at:
                samples.append([round(mb, 1) for mb in server.rss_mb()])
                await asyncio.sleep(10)

        await asyncio.gather(*clients, sample())

    asyncio.run(run())
    totals = [sum(sample) for sample in samples]
    after_warm_up = totals[6] if len(totals) > 6 else totals[0]  # the sample at one minute
    return {
        "minutes": minutes,
        "predict_requests": len(results),
        "explain_requests": len(explained),
        "errors": sum(status != 200 for _, status in results + explained),
        "rss_mb_at_1_min": round(after_warm_up, 1),
        "rss_mb_at_end": round(totals[-1], 1),
        "rss_mb_max_after_1_min": round(max(totals[6:] or totals), 1),
        "growth_after_1_min": round(max(totals[6:] or totals) / after_warm_up - 1, 4),
        "samples_mb": samples,
    }


def in_process_explanations(run, bodies):
    """The same explanations without the server: `classifier.explain([text])` and its JSON, in this process."""
    from hierattn.explain.report import to_json
    from hierattn.runs.run import load_run

    classifier = load_run(run).classifier
    texts = [json.loads(body)["text"] for body in bodies]
    for text in texts[-5:]:  # warm-up, as the server's worker does
        to_json(classifier.explain([text]))
    seconds = []
    for text in texts:
        started = time.perf_counter()
        to_json(classifier.explain([text]))
        seconds.append(time.perf_counter() - started)
    q = statistics.quantiles(seconds, n=100)
    return {"requests": len(texts), "p50_ms": round(q[49] * 1000, 2), "p99_ms": round(q[98] * 1000, 2)}


PHASES = ("ready", "baseline", "low", "load", "load32", "memory", "in-process")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run")
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=20.0, help="Seconds of load at 1 and 8 clients.")
    parser.add_argument("--seconds-32", type=float, default=60.0, help="Seconds of load at 32 clients.")
    parser.add_argument("--memory-minutes", type=float, default=10.0)
    parser.add_argument(
        "--phases",
        default="ready,baseline,low,load,memory,in-process",
        help=f"Which phases to run, of {', '.join(PHASES)} (load32: only the 32 clients of load).",
    )
    parser.add_argument(
        "--server-options", default="", help='More `serve` options for the loaded server, e.g. "--batch-wait-ms 5".'
    )
    parser.add_argument("--data", default=str(ROOT.parent / "shared/datasets/aclImdb_v1.tar.gz"))
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    phases = set(args.phases.split(","))

    from hierattn import runtime
    from hierattn.data import load_imdb

    test = load_imdb(args.data, splits=("test",), download=False, progress=False)["test"]
    texts = random.Random(0).sample(list(test.texts), args.texts)
    predict_bodies = [json.dumps({"text": text}).encode() for text in texts]
    explain_bodies = [json.dumps({"text": text}).encode() for text in texts[:200]]
    results = {"run": args.run, "texts": args.texts, "cpus": os.cpu_count(), "phases": sorted(phases)}
    results["server_options"] = args.server_options

    def report(key, value):
        results[key] = value
        print(json.dumps({key: value}), flush=True)

    if "ready" in phases:
        report("ready", readiness(args.run))
    if "baseline" in phases:
        predictor = runtime.load(pathlib.Path(args.run) / "model.onnx")
        predictor.predict(texts[:200])
        started = time.perf_counter()
        predictor.predict(texts)
        report("baseline", {"reviews_per_second": round(len(texts) / (time.perf_counter() - started), 1)})
        del predictor
    if phases & {"low", "load", "load32", "memory"}:
        server = Server(args.run, *shlex.split(args.server_options))
        server.wait(lambda body: body["explain"] == "ready")
        if "low" in phases:
            predict = sequential(server, b"/v1/predict", predict_bodies, 500)
            report("low_load", {"predict": predict, "explain": sequential(server, b"/v1/explain", explain_bodies, 200)})
        if phases & {"load", "load32"}:
            results["load"] = []
            for clients in (1, 8, 32) if "load" in phases else (32,):
                seconds = args.seconds_32 if clients == 32 else args.seconds
                results["load"].append(load(server, b"/v1/predict", predict_bodies, clients, seconds))
                print(json.dumps(results["load"][-1]), flush=True)
            if "baseline" in results:
                ratio = results["load"][-1]["per_second"] / results["baseline"]["reviews_per_second"]
                report("ratio_32_clients_to_baseline", round(ratio, 3))
        if "memory" in phases and args.memory_minutes:
            results["memory"] = memory(server, predict_bodies, explain_bodies, args.memory_minutes)
            print(json.dumps({k: v for k, v in results["memory"].items() if k != "samples_mb"}), flush=True)
        report("exit_code_on_sigterm", server.stop())
    if "in-process" in phases:
        report("explain_in_process", in_process_explanations(args.run, explain_bodies))
    if args.output:
        pathlib.Path(args.output).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
