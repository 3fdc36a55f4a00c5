"""docs/serve.md's example answers, from a real server on a run: written into the page and docs/examples/serve.json.

Serves the run given (`hierattn serve --no-explain` on a free loopback
port), sends each request that docs/serve.md shows as a `curl` line, and
writes the answers, exactly as the server returned them, into the page
between its marker comments (`<!-- example: NAME -->` ... `<!-- /example -->`)
and into docs/examples/serve.json with the requests and the run they came
from (its name, its test accuracy). tests/test_doc_examples.py checks that
the page shows what the JSON file holds, and that a server answers each
request in the same shape.

Command (on the default run: `python cli.py train imdb`):

    python benchmarks/doc_examples.py runs/han-imdb-20261127-030223
"""

import json
import pathlib
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

REPO = pathlib.Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "serve.md"
RECORD = REPO / "docs" / "examples" / "serve.json"

# Each example: the request docs/serve.md shows (as a curl line to localhost:8000).
EXAMPLES = {
    "predict": {
        "path": "/v1/predict",
        "body": {"texts": ["A superb film.", "A dull film: two hours I will not get back."]},
    },
    "predict-top-k": {"path": "/v1/predict", "body": {"text": "A superb film.", "top_k": 1}},
    "error": {"path": "/v1/predict", "body": {"texts": ["A superb film.", 3]}},
}
BLOCK = re.compile(r"(<!-- example: (?P<name>[\w-]+) -->\n)(?P<block>.*?)(<!-- /example -->)", re.S)


def send(url, body):
    """POSTs `body` as JSON to `url`: the status and the answer's text, as the server sent it."""
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:  # a 4xx example: its JSON error is the answer shown
        return error.code, error.read().decode()


def render(example):
    """The page's block for one recorded example: the curl line and the answer, in a code fence."""
    body = json.dumps(example["request"], ensure_ascii=False)
    answer = json.dumps(example["response"], ensure_ascii=False, separators=(",", ":"))  # as the server writes it
    status = "" if example["status"] == 200 else f"  # {example['status']}"
    return (
        f"```\ncurl -s localhost:8000{example['path']} -H 'content-type: application/json' \\\n"
        f"     -d '{body}'{status}\n{answer}\n```\n"
    )


def fill(page, record):
    """`page` (docs/serve.md's text) with each marked block replaced by its example from `record`."""
    return BLOCK.sub(lambda m: m.group(1) + render(record["examples"][m.group("name")]) + m.group(4), page)


def serve(run):
    """A `hierattn serve` process on a free port, and its URL once it answers."""
    command = [sys.executable, "-m", "hierattn", "serve", "--run", str(run), "--port", "0", "--no-explain"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=REPO)
    for line in process.stderr:
        found = re.search(r" on (http://\S+/) ", line)
        if found:
            return process, found.group(1).rstrip("/")
    raise SystemExit("the server did not start")


def main(run):
    run = pathlib.Path(run)
    metrics = json.loads((run / "metrics.json").read_text())
    process, url = serve(run)
    try:
        deadline = time.monotonic() + 60
        while send(url + "/v1/predict", {"text": "A superb film."})[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        examples = {}
        for name, example in EXAMPLES.items():
            status, text = send(url + example["path"], example["body"])
            examples[name] = {
                "path": example["path"],
                "request": example["body"],
                "status": status,
                "response": json.loads(text),
            }
            assert render(examples[name]).endswith(text + "\n```\n"), "the page would not show the server's bytes"
    finally:
        process.terminate()
        process.wait(60)
    record = {"run": run.name, "test_accuracy": metrics["test"]["accuracy"], "examples": examples}
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    page = PAGE.read_text()
    missing = set(EXAMPLES) - {m.group("name") for m in BLOCK.finditer(page)}
    assert not missing, f"docs/serve.md has no block for {sorted(missing)}"
    PAGE.write_text(fill(page, record))
    for name, example in examples.items():
        print(f"{name}: {example['status']} {json.dumps(example['response'], separators=(',', ':'))}")
    print(
        f"run {run.name} (test accuracy {record['test_accuracy']}): wrote {RECORD.relative_to(REPO)} and docs/serve.md"
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
