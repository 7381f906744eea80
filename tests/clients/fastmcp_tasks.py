"""FastMCP's tasks client (fastmcp + fastmcp-tasks, pinned in requirements.txt: 4.1.4, the
newest release whose tasks client installs) against `connectorgen serve`.

A paid job is started as a task with the person's yes (`call_tool_task`), followed
(`ToolTask.status()` and a running `ToolTask.result()`), cancelled with `ToolTask.cancel()`
(the cancel's consent asked through the task), and the identical call is made again.

- over Streamable HTTP (`MCP_URL`, the `serve --http` the harness started);
- over stdio (a `serve` FastMCP starts itself, with `CONNECTORGEN`, `MANIFEST`,
  `STDIO_STATE` and the credential variable from the environment).

Env: MCP_URL, PROVIDER_URL (the reference provider: `--base-url` and GET /_counters),
CONNECTORGEN, MANIFEST, STDIO_STATE, VIDGEN_TOKEN. Prints one line per finding; exits 1
when an expectation fails. Run by scripts/real-task-clients.sh (tests/clients/README.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import urllib.request
from typing import Any

# This file's name is the package's: never import it in place of the real fastmcp_tasks.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

NAME = "fastmcp-tasks"
STEP_DEADLINE = float(os.environ.get("STEP_DEADLINE_MS", "45000")) / 1000
PROTOCOL = "2026-07-28"


def must(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        print(f"{NAME} FAIL the variable {name} is not set", flush=True)
        sys.exit(2)
    return value


MCP_URL = must("MCP_URL")
PROVIDER_URL = must("PROVIDER_URL")

import fastmcp  # noqa: E402
import fastmcp_tasks  # noqa: E402  (importing it turns on the client's task support)
import mcp  # noqa: E402
from fastmcp import Client  # noqa: E402
from fastmcp.client.elicitation import ElicitResult  # noqa: E402
from fastmcp.client.transports import StdioTransport, StreamableHttpTransport  # noqa: E402
from fastmcp_tasks import ToolTask, call_tool_task  # noqa: E402
from fastmcp_tasks.client_models import ClientCreateTaskResult  # noqa: E402
import mcp_types  # noqa: E402
from mcp.client.session import ClientRequestContext  # noqa: E402
from mcp.shared._httpx_utils import create_mcp_http_client  # noqa: E402

failures = 0
scope = "setup"


def line(kind: str, text: str) -> None:
    print(f"{NAME} {kind:<4} [{scope}] {text}", flush=True)


def saw(text: str) -> None:
    line("saw", text)


def expect(ok: bool, text: str, detail: str = "") -> bool:
    global failures
    if ok:
        line("ok", text)
    else:
        failures += 1
        line("FAIL", f"{text} ({detail})" if detail else text)
    return ok


def short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def first_line(text: Any) -> str:
    return str(text or "").split("\n")[0]


def error_text(error: BaseException) -> str:
    code = getattr(getattr(error, "error", None), "code", None) or getattr(error, "code", None)
    return f"{type(error).__name__}{f' {code}' if code is not None else ''}: {first_line(error)}"


# ---- what the provider received ---------------------------------------------------------


def _counters_now() -> dict[str, int]:
    with urllib.request.urlopen(f"{PROVIDER_URL}/_counters", timeout=5) as response:
        body = json.load(response)
    of = body.get("requests", {}).get
    return {
        "creates": of("createVideo", 0),
        "polls": of("getVideo", 0),
        "deletes": of("deleteVideo", 0),
    }


async def counters() -> dict[str, int]:
    return await asyncio.to_thread(_counters_now)


# ---- events, each waited on with a deadline ----------------------------------------------

changed = asyncio.Event()


def notify() -> None:
    changed.set()


async def until(ready, seconds: float = STEP_DEADLINE) -> bool:
    """True once `ready()` holds (checked at each event and every 0.1 s), False at the
    deadline."""
    deadline = time.monotonic() + seconds
    while True:
        result = ready()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        changed.clear()
        try:
            await asyncio.wait_for(changed.wait(), min(0.1, left))
        except asyncio.TimeoutError:
            pass


# ---- the person ----------------------------------------------------------------------------

asked: list[dict[str, Any]] = []
cancel_answer = "yes"


async def person(message: str, response_type, params, context) -> ElicitResult:
    is_cancel = "deleteVideo" in message
    yes = cancel_answer == "yes" if is_cancel else True
    answer = (
        ElicitResult(action="accept", content={"confirm": True})
        if yes
        else ElicitResult(action="decline")
    )
    asked.append({"message": message, "answer": answer.action, "at": time.monotonic(),
                  "context": str(getattr(context, "request_id", ""))})
    saw(f'the person is asked ({getattr(context, "request_id", "?")}): "{first_line(message)}" -> {answer.action}')
    notify()
    return answer


# ---- the HTTP wire: which headers each POST carried ------------------------------------------

posted: list[dict[str, Any]] = []


async def _record(request) -> None:
    try:
        body = json.loads(request.content or b"{}")
    except (ValueError, RuntimeError):
        return
    if isinstance(body, dict) and isinstance(body.get("method"), str):
        posted.append({
            "method": body["method"],
            "mcp_name": request.headers.get("mcp-name"),
            "mcp_method": request.headers.get("mcp-method"),
        })


def recording_client_factory(headers=None, timeout=None, auth=None, **_):
    client = create_mcp_http_client(headers=headers, timeout=timeout, auth=auth)
    hooks = dict(client.event_hooks)
    hooks["request"] = [*hooks.get("request", []), _record]
    client.event_hooks = hooks
    return client


# ---- the steps -----------------------------------------------------------------------------

RUN_ID = f"{os.getpid()}"


def prompt(run: str) -> dict[str, str]:
    return {"prompt": f"a cat on a skateboard ({NAME} run {run}, {RUN_ID})"}


async def call_with_consent(client: Client, name: str, arguments: dict[str, Any]) -> ToolTask:
    """What `call_tool_task` does, with the call's input_required rounds answered: the SDK's
    manual mode (`session.call_tool(..., allow_input_required=True)`, each embedded request
    through the client's own elicitation callback, the retry carrying `input_responses` and
    the echoed `request_state`), then the CreateTaskResult in FastMCP's own `ToolTask`."""
    session = client.session
    answer = await session.call_tool(name=name, arguments=arguments, allow_input_required=True, allow_claimed=True)
    for _ in range(10):
        if not isinstance(answer, mcp_types.InputRequiredResult):
            break
        responses: dict[str, Any] = {}
        for key, request in (answer.input_requests or {}).items():
            context = ClientRequestContext(session=session, request_id=key)
            responses[key] = await session.dispatch_input_request(context, request)
        answer = await session.call_tool(
            name=name, arguments=arguments, input_responses=responses,
            request_state=answer.request_state, allow_input_required=True, allow_claimed=True,
        )
    if not isinstance(answer, ClientCreateTaskResult):
        raise RuntimeError(f"the call did not run as a task: {short(str(answer), 200)}")
    return ToolTask(client, name, answer)


async def create(client: Client, run: str, before: dict[str, int]) -> ToolTask | None:
    asked_before = len(asked)
    # FastMCP's own task call first.
    try:
        task = await asyncio.wait_for(call_tool_task(client, "createVideo", prompt(run)), STEP_DEADLINE)
        saw("call_tool_task answered a ToolTask")
    except Exception as error:  # noqa: BLE001 - every failure is a finding
        saw(f"call_tool_task raised {error_text(error)}")
        refused = await counters()
        saw(f"after it: the person was asked {len(asked) - asked_before} time(s), "
            f"creates +{refused['creates'] - before['creates']}")
        expect(refused["creates"] == before["creates"], "nothing reached the provider without the yes")
        try:
            task = await asyncio.wait_for(call_with_consent(client, "createVideo", prompt(run)), STEP_DEADLINE)
            saw("the SDK's manual input_required mode answered the consent; the task is wrapped in fastmcp_tasks.ToolTask")
        except Exception as error2:  # noqa: BLE001
            expect(False, "the call with the consent answered is a task", error_text(error2))
            return None
    after = await counters()
    created = task.create_result
    saw(f"the paid call is a task: taskId {task.task_id}, status {created.status}, "
        f"pollIntervalMs {getattr(created, 'poll_interval_ms', None)}")
    questions = asked[asked_before:]
    expect(len(questions) == 1 and "createVideo" in questions[0]["message"],
           "the person was asked once, by elicitation in the call, before the create",
           short([first_line(q["message"]) for q in questions]))
    expect(after["creates"] - before["creates"] == 1, "exactly one create reached the provider",
           f"creates +{after['creates'] - before['creates']}")
    return task


async def resubmit(client: Client, run: str, task_id: str) -> None:
    before = await counters()
    asked_before = len(asked)
    try:
        again = await asyncio.wait_for(call_tool_task(client, "createVideo", prompt(run)), STEP_DEADLINE)
    except Exception as error:  # noqa: BLE001
        expect(False, "the identical call is answered", error_text(error))
        return
    saw(f"identical call answered: taskId {again.task_id}, status {again.create_result.status}")
    expect(again.task_id == task_id, "the identical call answers the same task")
    expect((await counters())["creates"] == before["creates"], "no second create reached the provider")
    saw(f"the person was asked {len(asked) - asked_before} time(s) by the identical call")


async def scenario(client: Client, run: str, answer: str) -> None:
    """Steps 1 to 4 on a connected client: create (with the yes), follow, ToolTask.cancel()
    beside a running ToolTask.result() (the person answers `answer`), the identical call."""
    global cancel_answer
    cancel_answer = answer
    before = await counters()
    task = await create(client, run, before)
    if task is None:
        return
    # 2. Follow it: result() drives the task (tasks/get) and answers its questions.
    following = asyncio.create_task(task.result())
    following.add_done_callback(lambda _: notify())
    try:
        status = await asyncio.wait_for(task.status(), STEP_DEADLINE)
    except Exception as error:  # noqa: BLE001
        saw(f"ToolTask.status() (tasks/get) raised {error_text(error)}")
        await refused(client, run, task, following)
        return
    saw(f"ToolTask.status() (tasks/get): {status.status}, statusMessage \"{status.status_message}\"")
    expect(status.status == "working", "the client follows the task: tasks/get answers working")
    now = await counters()
    expect(now["polls"] > before["polls"] and now["creates"] == before["creates"] + 1,
           "serve polled getVideo for it, and never sent the create again",
           f"polls +{now['polls'] - before['polls']}")
    # 3. Cancel.
    asked_before = len(asked)
    deletes = now["deletes"]
    acknowledged = await asyncio.wait_for(task.cancel(), STEP_DEADLINE)
    saw(f"ToolTask.cancel() (tasks/cancel) returned {acknowledged!r}; result() done: {following.done()}")
    expect((await counters())["deletes"] == deletes, "the acknowledgement sent nothing to the provider")
    shown = None
    if len(asked) == asked_before:
        snapshot = await asyncio.wait_for(task.status(), STEP_DEADLINE)
        shown = snapshot.status
        saw(f"ToolTask.status() right after the cancel: {shown}"
            f"{', inputRequests ' + ','.join(snapshot.input_requests or {}) if snapshot.input_requests else ''}")
    expect(shown in (None, "input_required") and not following.done(),
           "the client did not show cancelled before the person was asked",
           f"status {shown}, result() done: {following.done()}")
    got_asked = await until(lambda: len(asked) > asked_before)
    expect(got_asked and "deleteVideo" in asked[asked_before]["message"],
           "the person is asked the cancel's question through the task (by the running result())",
           "never asked" if not got_asked else first_line(asked[asked_before]["message"]))
    if answer == "yes":
        deleted = await until(lambda: deletes_above(deletes))
        expect(deleted, "after the yes the delete reached the provider")
        ended = await until(lambda: following.done())
        if ended:
            error = following.exception()
            outcome = error_text(error) if error else short(str(following.result()), 200)
        else:
            error, outcome = None, "still running"
        saw(f"ToolTask.result() ended: {outcome}")
        expect(error is not None and "cancelled" in str(error), "result() ends saying the task was cancelled")
        final = await asyncio.wait_for(task.status(), STEP_DEADLINE)
        saw(f"ToolTask.status() after the yes: {final.status}")
        expect(final.status == "cancelled", "the task reads cancelled")
        expect((await counters())["deletes"] - deletes == 1, "exactly one delete")
    else:
        # After the no the task goes on: result() keeps following it.
        async def status_is_working() -> bool:
            return (await task.status()).status == "working"

        await until(status_is_working)
        after_no = await asyncio.wait_for(task.status(), STEP_DEADLINE)
        saw(f"ToolTask.status() after the no: {after_no.status}")
        expect(after_no.status == "working", "after the no the task goes on working")
        expect((await counters())["deletes"] == deletes, "after the no nothing was deleted")
        expect(not following.done(), "result() is still following",
               error_text(following.exception()) if following.done() and following.exception() else "")
    if not following.done():
        following.cancel()
    await asyncio.gather(following, return_exceptions=True)
    # 4. The identical call again.
    await resubmit(client, run, task.task_id)
    end = await counters()
    saw(f"provider counters for this run: creates +{end['creates'] - before['creates']}, "
        f"deletes +{end['deletes'] - before['deletes']}, polls +{end['polls'] - before['polls']}")
    expect(end["creates"] - before["creates"] == 1, "one create in the whole run")


async def refused(client: Client, run: str, task: ToolTask, following: asyncio.Task) -> None:
    """The task's requests are refused (over HTTP: no Mcp-Name on tasks/*): what each of
    the handle's calls does, and that nothing is deleted or created again."""
    ended = await until(lambda: following.done())
    saw(f"ToolTask.result() (following it): {error_text(following.exception()) if ended and following.exception() else 'still running' if not ended else 'returned'}")
    if not following.done():
        following.cancel()
    await asyncio.gather(following, return_exceptions=True)
    deletes = (await counters())["deletes"]
    asked_before = len(asked)
    try:
        await asyncio.wait_for(task.cancel(), STEP_DEADLINE)
        saw("ToolTask.cancel() (tasks/cancel) returned")
    except Exception as error:  # noqa: BLE001
        saw(f"ToolTask.cancel() (tasks/cancel) raised {error_text(error)}")
    try:
        await asyncio.wait_for(task.result(), STEP_DEADLINE)
        saw("ToolTask.result() after the cancel returned")
    except Exception as error:  # noqa: BLE001
        saw(f"ToolTask.result() after the cancel raised {error_text(error)}")
    saw(f"the person was asked {len(asked) - asked_before} time(s) after the cancel")
    expect((await counters())["deletes"] == deletes, "no delete reached the provider without a yes")
    await resubmit(client, run, task.task_id)


async def http_run() -> None:
    """Over Streamable HTTP, against the `serve --http` the harness started."""
    global scope
    scope = "http run H: ToolTask.cancel() beside a running result(), the person answers yes"
    transport = StreamableHttpTransport(MCP_URL, httpx_client_factory=recording_client_factory)
    client = Client(transport, mode=PROTOCOL, elicitation_handler=person, timeout=30)
    async with client:
        saw(f"connected over HTTP: revision {client.session.protocol_version}")
        await scenario(client, "H", "yes")

        # The transparent path: client.call_tool answers the consent and follows the task itself.
        scope = "http run H2: client.call_tool (transparent)"
        before = await counters()
        asked_before = len(asked)
        try:
            result = await asyncio.wait_for(client.call_tool("createVideo", prompt("H2")), STEP_DEADLINE)
            saw(f"client.call_tool returned: {short(str(result), 200)}")
        except Exception as error:  # noqa: BLE001
            saw(f"client.call_tool raised {error_text(error)}")
        after = await counters()
        saw(f"the person was asked {len(asked) - asked_before} time(s); provider: creates +{after['creates'] - before['creates']}")
        expect(after["creates"] - before["creates"] <= 1, "at most one create for the call")

    scope = "http: wire"
    tasks_posts = [p for p in posted if p["method"].startswith("tasks/")]
    with_name = [p for p in tasks_posts if p["mcp_name"]]
    saw(f"FastMCP posted {len(tasks_posts)} tasks/* requests over HTTP, Mcp-Name on {len(with_name)} of them "
        f"({', '.join(sorted({p['method'] for p in tasks_posts}))}); "
        f"tools/call: {len([p for p in posted if p['method'] == 'tools/call'])}, Mcp-Name on "
        f"{len([p for p in posted if p['method'] == 'tools/call' and p['mcp_name']])}")


async def stdio_run(run: str, answer: str) -> None:
    """Over stdio (no HTTP headers), a `serve` FastMCP starts itself: the whole scenario."""
    global scope
    scope = f"stdio run {run}: ToolTask.cancel() beside a running result(), the person answers {answer}"
    state = must("STDIO_STATE")
    transport = StdioTransport(
        command=must("CONNECTORGEN"),
        args=["serve", must("MANIFEST"), "--base-url", PROVIDER_URL, "--state", state],
        env={k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "VIDGEN_TOKEN")},
        keep_alive=False,
        log_file=open(os.path.join(state, "serve-stdio.log"), "a"),  # noqa: SIM115
    )
    client = Client(transport, mode=PROTOCOL, elicitation_handler=person, timeout=30)
    async with client:
        saw(f"connected over stdio: revision {client.session.protocol_version}")
        await scenario(client, run, answer)


async def deletes_above(deletes: int) -> bool:
    return (await counters())["deletes"] > deletes


async def main() -> int:
    global scope
    saw(f"fastmcp {fastmcp.__version__}, fastmcp-tasks {fastmcp_tasks.__version__}, "
        f"mcp {getattr(mcp, '__version__', None) or _version('mcp')}")
    only = os.environ.get("RUNS", "").split(",") if os.environ.get("RUNS") else None
    for run_id, job in (("H", http_run), ("S1", lambda: stdio_run("S1", "yes")), ("S2", lambda: stdio_run("S2", "no"))):
        if only and run_id not in only:
            continue
        try:
            await asyncio.wait_for(job(), 4 * STEP_DEADLINE)
        except Exception as error:  # noqa: BLE001
            expect(False, "the run went through", error_text(error))
    scope = "result"
    if failures:
        line("FAIL", f"{failures} expectation(s) failed")
        return 1
    line("ok", "every expectation held")
    return 0


def _version(name: str) -> str:
    from importlib.metadata import version
    return version(name)


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
