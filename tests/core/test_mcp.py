"""MCP servers: mcp.json, real servers over stdio and Streamable HTTP, results, names."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from parley.core.content import ImageBlock, TextBlock
from parley.core.mcp import config as cfg
from parley.core.mcp.config import KEYRING_MARK, McpConfigError
from parley.core.mcp.host import McpHost
from parley.core.mcp.names import NAME_RE, wire_name, wire_schema
from parley.core.mcp.results import MAX_TEXT_CHARS, to_tool_result
from tests.fakes.mcp_server import PNG, stdio_entry


def write(path: Path, servers: dict) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


# --- configuration ----------------------------------------------------------------------


def test_claude_desktop_shape_is_read_with_parleys_extra_keys(tmp_path):
    path = write(tmp_path / "mcp.json", {
        "files": {"command": "npx", "args": ["-y", "server-fs", "/notes"], "env": {"A": "1"},
                  "cwd": "/tmp", "alwaysAllow": ["read_file"]},
        "web": {"url": "https://example.com/mcp", "headers": {"X-Team": "a"}, "timeout": 5,
                "somethingElse": True},
    })
    servers = cfg.load(path)
    assert list(servers) == ["files", "web"]
    files, web = servers["files"], servers["web"]
    assert (files.kind, files.args, dict(files.env), files.cwd, files.always_allow) == (
        "stdio", ("-y", "server-fs", "/notes"), {"A": "1"}, "/tmp", ("read_file",))
    assert (web.kind, web.url, dict(web.headers), web.timeout_s) == (
        "http", "https://example.com/mcp", {"X-Team": "a"}, 5.0)
    # Saving keeps what Parley does not use, and reads back the same.
    cfg.save(path, servers)
    assert json.loads(path.read_text())["mcpServers"]["web"]["somethingElse"] is True
    assert cfg.load(path) == servers


def test_a_missing_file_means_no_servers(tmp_path):
    assert cfg.load(tmp_path / "mcp.json") == {}


@pytest.mark.parametrize(("text", "words"), [
    ("{not json", "not valid JSON (line 1"),
    ('["a"]', 'must hold an object like {"mcpServers"'),
    ('{"mcpServers": []}', "“mcpServers” must be an object"),
    ('{"mcpServers": {"x": {}}}', "the server “x” in"),
    ('{"mcpServers": {"x": {}}}', "neither a “command”"),
    ('{"mcpServers": {"x": {"command": "a", "url": "http://b"}}}', "both a “command” and a"),
    ('{"mcpServers": {"x": {"url": "ftp://b"}}}', "must start with http:// or https://"),
    ('{"mcpServers": {"x": {"command": "a", "args": "b c"}}}', "“args” must be a list"),
    ('{"mcpServers": {"x": {"command": "a", "env": {"A": 1}}}}', "“env” must be an object"),
    ('{"mcpServers": {"x": {"command": "a", "timeout": 0}}}', "from 1 to 3600"),
    ('{"mcpServers": {"a/b": {"command": "a"}}}', "a server name may use"),
])
def test_bad_config_says_which_file_which_server_and_what(tmp_path, text, words):
    path = tmp_path / "mcp.json"
    path.write_text(text)
    with pytest.raises(McpConfigError) as err:
        cfg.load(path)
    assert words in err.value.message
    assert str(path) in err.value.message
    assert "MCP servers stay off until then" in err.value.message


def test_a_bad_file_leaves_the_host_without_servers_and_with_the_error(tmp_path):
    host = McpHost(write(tmp_path / "mcp.json", {"x": {"command": ""}}))
    host.load()
    assert host.configs == {} and host.error is not None
    assert "“command” must be the program to start" in host.error.message


def test_claude_desktop_config_paths_and_import(tmp_path):
    linux = cfg.claude_desktop_path("linux", {}, home=Path("/home/u"))
    assert linux == Path("/home/u/.config/Claude/claude_desktop_config.json")
    mac = cfg.claude_desktop_path("darwin", {}, home=Path("/Users/u"))
    assert mac == Path("/Users/u/Library/Application Support/Claude/claude_desktop_config.json")
    win = cfg.claude_desktop_path("win32", {"APPDATA": "C:/Users/u/AppData/Roaming"})
    assert win == Path("C:/Users/u/AppData/Roaming/Claude/claude_desktop_config.json")

    source = write(tmp_path / "claude.json", {"a": {"command": "x"}, "b": {"url": "http://h/m"}})
    current = {"a": cfg.ServerConfig("a", command="mine")}
    merged, added = cfg.import_claude_desktop(source, current)
    assert added == ["b"] and merged["a"].command == "mine" and merged["b"].url == "http://h/m"
    with pytest.raises(McpConfigError, match="Claude desktop's configuration is not there"):
        cfg.import_claude_desktop(tmp_path / "none.json", current)


def test_secret_names():
    assert all(cfg.is_secret_name(n) for n in ("API_KEY", "GITHUB_TOKEN", "Authorization",
                                                "X-Secret", "DB_PASSWORD"))
    assert not any(cfg.is_secret_name(n) for n in ("DEBUG", "PATH", "X-Team"))


# --- names, schemas, results ---------------------------------------------------------------


def test_wire_names_fit_the_providers_rules_and_stay_apart():
    assert wire_name("files", "read_file") == "mcp__files__read_file"
    odd = wire_name("my server.v2", "do/thing?")
    assert NAME_RE.match(odd) and odd == "mcp__my_server_v2__do_thing_"
    long_a, long_b = wire_name("s" * 40, "t" * 40 + "a"), wire_name("s" * 40, "t" * 40 + "b")
    assert NAME_RE.match(long_a) and len(long_a) == 64 and long_a != long_b
    assert wire_name("s" * 40, "t" * 40 + "a") == long_a  # deterministic


def test_wire_schema_is_an_object_without_meta_keys():
    assert wire_schema({}) == {"type": "object", "properties": {}}
    schema = wire_schema({"$schema": "x", "type": "object", "properties": {"a": {}},
                          "required": ["a"]})
    assert schema == {"type": "object", "properties": {"a": {}}, "required": ["a"]}


def test_results_become_tool_result_parts():
    from mcp.types import (
        BlobResourceContents,
        CallToolResult,
        EmbeddedResource,
        ImageContent,
        TextContent,
        TextResourceContents,
    )

    png = base64.b64encode(PNG).decode()
    result = CallToolResult(content=[
        TextContent(text="hello"),
        ImageContent(data=png, mime_type="image/png"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="body")),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///a.bin", blob="AAAA",
                                                       mime_type="application/zip")),
    ], is_error=True)
    block = to_tool_result("call_1", result)
    assert block.tool_use_id == "call_1" and block.is_error
    text, image, res, blob = block.content
    assert text == TextBlock("hello")
    assert isinstance(image, ImageBlock) and image.media_type == "image/png" and image.data == png
    assert res == TextBlock("[resource file:///a.txt]\nbody")
    assert isinstance(blob, TextBlock) and "application/zip, not sent" in blob.text
    structured = to_tool_result("c", CallToolResult(content=[], structured_content={"n": 1}))
    assert structured.content == (TextBlock('{"n": 1}'),)


def test_a_huge_result_is_cut_and_says_so():
    from mcp.types import CallToolResult, TextContent

    block = to_tool_result("c", CallToolResult(content=[TextContent(text="x" * 300_000)]))
    first, note = block.content
    assert len(first.text) == MAX_TEXT_CHARS
    assert "300,000 characters" in note.text


# --- real servers -------------------------------------------------------------------------------


@pytest.fixture
async def host(tmp_path):
    made: list[McpHost] = []

    def make(servers: dict, keys=None) -> McpHost:
        h = McpHost(write(tmp_path / "mcp.json", servers), keys)
        h.load()
        made.append(h)
        return h

    yield make
    for h in made:
        await h.close()


async def test_stdio_server_starts_on_first_use_lists_and_calls_tools_and_stops(host):
    h = host({"fake": stdio_entry()})
    assert h.status("fake").state == "stopped"
    seen: list[str] = []
    h.on_change(lambda s: seen.append(s.state))
    status = (await h.ensure())["fake"]
    assert status.state == "ready", status.error
    assert [t.name for t in status.tools][:3] == ["echo", "add", "picture"]
    assert status.describe() == f"Ready — {len(status.tools)} tools"
    result = await h.call("fake", "echo", {"text": "hi"}, 10)
    assert [c.text for c in result.content] == ["echo: hi"] and not result.is_error
    await h.close()
    assert seen[:2] == ["starting", "ready"] and h.status("fake").state == "stopped"


async def test_reload_reads_a_fixed_or_changed_file_while_parley_runs(host, tmp_path):
    h = host({"x": {"command": ""}})  # broken when Parley started
    assert h.configs == {} and h.error is not None
    assert "Refresh memory, skills and tools" in h.error.message  # no restart needed

    write(tmp_path / "mcp.json", {"fake": stdio_entry()})  # fixed while running
    assert await h.reload() is True
    assert h.error is None and list(h.configs) == ["fake"]
    assert (await h.ensure())["fake"].state == "ready"
    assert await h.reload() is False  # nothing changed: the running server is kept
    assert h.status("fake").state == "ready"

    write(tmp_path / "mcp.json", {"other": stdio_entry()})  # "fake" removed: stopped
    assert await h.reload() is True
    assert list(h.configs) == ["other"] and h.status("fake").state == "stopped"

    (tmp_path / "mcp.json").write_text("{not json")  # broken again: no servers, the error
    assert await h.reload() is True
    assert h.configs == {} and h.error is not None


async def test_a_server_that_cannot_start_fails_with_its_own_stderr(host):
    h = host({"broken": stdio_entry("--fail-start"), "absent": {"command": "/no/such/prog"}})
    statuses = await h.ensure()
    broken, absent = statuses["broken"], statuses["absent"]
    assert broken.state == "failed"
    assert "cannot open the database /nowhere/db.sqlite" in broken.error
    assert absent.state == "failed" and "command not found: /no/such/prog" in absent.error
    assert "Errno" not in absent.error  # said in words, not Python's


async def test_a_crash_mid_call_fails_that_call_and_the_next_use_restarts(host):
    from parley.core.mcp.client import ServerFailed

    h = host({"fake": stdio_entry()})
    with pytest.raises(ServerFailed) as err:
        await h.call("fake", "crash", {}, 10)
    assert "stopped while running crash" in err.value.message
    assert "crashing on purpose" in err.value.message
    assert h.status("fake").state == "failed"
    result = await h.call("fake", "echo", {"text": "back"}, 10)
    assert result.content[0].text == "echo: back" and h.status("fake").state == "ready"


async def test_a_hanging_call_times_out(host):
    h = host({"fake": stdio_entry()})
    with pytest.raises(TimeoutError):
        await h.call("fake", "sleep", {"seconds": 30}, 0.5)
    assert (await h.call("fake", "add", {"a": 1, "b": 2}, 10)).content[0].text == "3.0"


async def test_secrets_marked_for_the_keyring_reach_the_server(host):
    class Keys:
        def get(self, key_id):
            assert key_id == "mcp:fake:env:FAKE_MCP_SECRET"
            return SimpleNamespace(value="s3cret")

    h = host({"fake": stdio_entry(env={"FAKE_MCP_SECRET": KEYRING_MARK})}, Keys())
    result = await h.call("fake", "whoami", {}, 10)
    assert result.content[0].text.startswith("env=s3cret")


async def test_streamable_http_server(host, mcp_http_server):
    h = host({"web": {"url": mcp_http_server.url, "headers": {"X-Secret": "hdr"}}})
    status = (await h.ensure())["web"]
    assert status.state == "ready", status.error
    assert "echo" in [t.name for t in status.tools]
    result = await h.call("web", "whoami", {}, 10)
    assert result.content[0].text.endswith("header=hdr")


async def test_an_http_server_that_is_not_there_fails_in_words(host, closed_port_url):
    h = host({"web": {"url": closed_port_url + "/mcp"}})
    status = (await h.ensure())["web"]
    assert status.state == "failed" and status.error.startswith("it could not be started")


async def test_a_changed_tool_list_is_fetched_again(host):
    h = host({"fake": stdio_entry()})
    await h.ensure()
    assert "extra" not in [t.name for t in h.status("fake").tools]
    await h.call("fake", "grow", {}, 10)
    for _ in range(100):
        if "extra" in [t.name for t in h.status("fake").tools]:
            break
        import asyncio

        await asyncio.sleep(0.05)
    assert "extra" in [t.name for t in h.status("fake").tools]


def test_display_names():
    from parley.core.mcp.names import display_name

    assert display_name("mcp__files__read_file") == "files › read_file"
    assert display_name("set_context") == "set_context"


async def test_a_server_printing_garbage_on_stdout_still_works(host):
    h = host({"noisy": stdio_entry("--garbage")})
    status = (await h.ensure())["noisy"]
    assert status.state == "ready", status.error
    assert (await h.call("noisy", "echo", {"text": "ok"}, 10)).content[0].text == "echo: ok"


async def test_a_server_asking_to_sign_in_gets_oauth_and_the_tokens_are_kept(tmp_path):
    import asyncio
    import urllib.request

    from parley.core.keys import FileBackend, KeyStore
    from tests.fakes.mcp_oauth import FakeOAuthProvider
    from tests.fakes.mcp_server import HttpMcpServer

    provider = FakeOAuthProvider()
    server = HttpMcpServer(oauth=provider).start()
    keys = KeyStore(FileBackend(tmp_path / "keys.json"))
    opened: list[str] = []

    async def browser(url: str) -> None:  # the person agrees at once
        opened.append(url)
        await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=10).read())

    path = write(tmp_path / "mcp.json", {"secure": {"url": server.url}})
    try:
        host = McpHost(path, keys, open_url=browser)
        host.load()
        seen: list[str] = []
        host.on_change(lambda s: seen.append(s.describe()))
        status = (await host.ensure())["secure"]
        assert status.state == "ready", status.error
        assert len(opened) == 1 and "/authorize?" in opened[0] and provider.authorized == 1
        assert "Starting… (waiting for you to sign in in your browser)" in seen
        result = await host.call("secure", "echo", {"text": "signed"}, 10)
        assert result.content[0].text == "echo: signed"
        await host.close()
        assert keys.get("mcp:secure:oauth:tokens") is not None
        assert keys.get("mcp:secure:oauth:client") is not None

        # Parley starts again: the kept token is used, no browser.
        again = McpHost(path, keys, open_url=browser)
        again.load()
        assert (await again.ensure())["secure"].state == "ready"
        assert len(opened) == 1 and provider.authorized == 1
        await again.close()
    finally:
        server.stop()
