"""Chat history export files written from the public descriptions of their formats.

ChatGPT (Settings → Data controls → Export: ``conversations.json`` beside the
uploaded and generated images), Claude.ai (Settings → Privacy → Export data:
``conversations.json``) and Open WebUI (Settings → Chats → Export chats:
``chat-export-<time>.json``). Used by the import tests and the import benchmark.
"""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

T0 = 1_700_000_000.0  # 2023-11-14, epoch seconds (ChatGPT writes floats)
PNG_BYTES = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


# --- ChatGPT ------------------------------------------------------------------------


class ChatGPTConversation:
    """Builds one conversation's ``mapping`` tree, node by node."""

    def __init__(self, title: str, conv_id: str | None = None, t0: float = T0) -> None:
        self.title = title
        self.id = conv_id or str(uuid.uuid4())
        self.t = t0
        self.mapping: dict[str, dict[str, Any]] = {}
        self.root = "client-created-root"
        self.mapping[self.root] = {"id": self.root, "message": None, "parent": None,
                                   "children": []}
        self.current = self.root

    def add(self, parent: str | None, role: str, content: dict[str, Any], *,
            model: str | None = None, recipient: str = "all", name: str | None = None,
            hidden: bool = False, node_id: str | None = None, status: str =
            "finished_successfully", metadata: dict[str, Any] | None = None) -> str:
        """Add a node under ``parent`` (None: the last node added) and return its id."""
        parent = parent or self.current
        node_id = node_id or str(uuid.uuid4())
        self.t += 7.25
        meta: dict[str, Any] = dict(metadata or {})
        if model:
            meta["model_slug"] = model
            meta["default_model_slug"] = model
        if hidden:
            meta["is_visually_hidden_from_conversation"] = True
        message = {
            "id": node_id,
            "author": {"role": role, "name": name, "metadata": {}},
            "create_time": self.t if role != "system" else None,
            "update_time": None,
            "content": content,
            "status": status,
            "end_turn": True if role == "assistant" and recipient == "all" else None,
            "weight": 0.0 if hidden else 1.0,
            "metadata": meta,
            "recipient": recipient,
            "channel": None,
        }
        self.mapping[node_id] = {"id": node_id, "message": message, "parent": parent,
                                 "children": []}
        self.mapping[parent]["children"].append(node_id)
        self.current = node_id
        return node_id

    def text(self, role: str, text: str, parent: str | None = None, **kw: Any) -> str:
        return self.add(parent, role, {"content_type": "text", "parts": [text]}, **kw)

    def to_json(self, current: str | None = None) -> dict[str, Any]:
        return {
            "title": self.title,
            "create_time": T0 if not self.mapping else self._first_time(),
            "update_time": self.t,
            "mapping": self.mapping,
            "moderation_results": [],
            "current_node": current or self.current,
            "plugin_ids": None,
            "conversation_id": self.id,
            "conversation_template_id": None,
            "gizmo_id": None,
            "is_archived": False,
            "safe_urls": [],
            "default_model_slug": "gpt-4o",
            "id": self.id,
        }

    def _first_time(self) -> float:
        times = [n["message"]["create_time"] for n in self.mapping.values()
                 if n["message"] and n["message"]["create_time"]]
        return min(times) - 1 if times else T0


def image_part(asset: str, width: int = 1, height: int = 1) -> dict[str, Any]:
    return {"content_type": "image_asset_pointer", "asset_pointer": f"file-service://{asset}",
            "size_bytes": len(PNG_BYTES), "width": width, "height": height, "fovea": None,
            "metadata": None}


def lisbon_trip() -> tuple[ChatGPTConversation, dict[str, str]]:
    """A conversation with every feature: a hidden system root, custom instructions, a
    regenerated answer, an edited question, an image (included) and one not included,
    code run by the python tool, a DALL·E call, a quote from browsing, reasoning.

    Returns the builder and the ids of the interesting nodes.
    """
    c = ChatGPTConversation("Trip to Lisbon", "conv-lisbon")
    ids: dict[str, str] = {}
    c.add(c.root, "system", {"content_type": "text", "parts": [""]}, hidden=True)
    c.add(None, "user", {"content_type": "user_editable_context",
                         "user_profile": "I live in Berlin.", "user_instructions": "Be brief."},
          hidden=True)
    ids["q1"] = c.text("user", "Plan three days in Lisbon.")
    ids["a1_old"] = c.text("assistant", "Day 1: Alfama. Day 2: Belém. Day 3: Sintra.",
                           model="gpt-4")
    ids["a1"] = c.text("assistant", "Day 1: Baixa and Alfama.\nDay 2: Belém.\nDay 3: Cascais.",
                       parent=ids["q1"], model="gpt-4o")
    ids["q2_old"] = c.text("user", "What about Porto?")
    ids["a2_old"] = c.text("assistant", "Porto is 3 hours north by train.", model="gpt-4o")
    ids["q2"] = c.add(ids["a1"], "user", {"content_type": "multimodal_text", "parts": [
        image_part("file-TramPhoto1"), image_part("file-NotInExport9"),
        "Which tram is this, and where does it go?"]})
    ids["a2"] = c.text("assistant", "That is tram 28; it goes from Martim Moniz to Campo de "
                                    "Ourique.", model="gpt-4o")
    ids["q3"] = c.text("user", "How many days until the 1st of June if today is May 20?")
    ids["code"] = c.add(None, "assistant", {"content_type": "code", "language": "python",
                                            "text": "from datetime import date\n"
                                                    "(date(2024,6,1)-date(2024,5,20)).days"},
                        model="gpt-4o", recipient="python")
    ids["out"] = c.add(None, "tool", {"content_type": "execution_output", "text": "12"},
                       name="python")
    ids["a3"] = c.text("assistant", "12 days.", model="gpt-4o")
    ids["q4"] = c.text("user", "Draw a yellow tram.")
    ids["dalle"] = c.text("assistant", json.dumps({"prompt": "a yellow Lisbon tram",
                                                   "size": "1024x1024"}),
                          model="gpt-4o", recipient="dalle.text2im")
    ids["dalle_out"] = c.add(None, "tool", {"content_type": "multimodal_text", "parts": [
        image_part("file-DalleTram77", 1024, 1024)]}, name="dalle.text2im")
    ids["a4"] = c.text("assistant", "Here is your tram.", model="gpt-4o")
    ids["q5"] = c.text("user", "Is the Santa Justa lift open on Sundays?")
    ids["search"] = c.text("assistant", "search(\"Santa Justa lift opening hours\")",
                           model="gpt-4o", recipient="browser")
    ids["quote"] = c.add(None, "tool", {"content_type": "tether_quote",
                                        "url": "https://example.org/santa-justa",
                                        "domain": "example.org", "title": "Santa Justa Lift",
                                        "text": "Open daily 7:30-23:00."}, name="browser")
    ids["think"] = c.add(None, "assistant", {"content_type": "thoughts", "thoughts": [
        {"summary": "Checking hours", "content": "The page says daily."}],
        "source_analysis_msg_id": "x"}, model="o1")
    ids["recap"] = c.add(None, "assistant", {"content_type": "reasoning_recap",
                                             "content": "Thought for 4 seconds"}, model="o1")
    ids["a5"] = c.text("assistant", "Yes, it opens every day at 7:30.", model="o1")
    return c, ids


def plain_chat(n: int, turns: int = 10, *, with_branch: bool = False) -> dict[str, Any]:
    """A plain conversation of ``turns`` messages (numbered ``n``), for bulk files."""
    c = ChatGPTConversation(f"Chat number {n}", f"conv-{n:05d}", T0 + n * 3600)
    c.add(c.root, "system", {"content_type": "text", "parts": [""]}, hidden=True)
    first_answer = None
    for i in range(turns // 2):
        q = c.text("user", f"Question {i} of chat {n}: how do I cook {i} eggs? " * 3)
        a = c.text("assistant", f"Answer {i}: boil them for {i + 6} minutes.\n\n"
                                "1. Boil water\n2. Add the eggs\n3. Wait\n" * 4, model="gpt-4o")
        if i == 0:
            first_answer = (q, a)
    current = c.current
    if with_branch and first_answer is not None:
        c.text("assistant", f"Another answer for chat {n}.", parent=first_answer[0],
               model="gpt-4o")
    return c.to_json(current)


def chatgpt_export(count: int, turns: int = 10, branch_every: int = 10) -> list[dict[str, Any]]:
    """``count`` conversations; every ``branch_every``-th has a regenerated answer."""
    return [plain_chat(n, turns, with_branch=branch_every > 0 and n % branch_every == 0)
            for n in range(count)]


def write_chatgpt_folder(folder: Path, conversations: list[dict[str, Any]],
                         images: dict[str, str]) -> Path:
    """Write ``conversations.json`` and image files (``name`` → asset id) as the export does."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in images:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(PNG_BYTES)
    path = folder / "conversations.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    return path


# --- Claude.ai ------------------------------------------------------------------------


def claude_message(uuid_: str, sender: str, blocks: list[dict[str, Any]], when: str, *,
                   parent: str | None = None, attachments: list[dict[str, Any]] | None = None,
                   files: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    msg: dict[str, Any] = {
        "uuid": uuid_, "text": text, "content": blocks, "sender": sender,
        "created_at": when, "updated_at": when, "attachments": attachments or [],
        "files": files or [],
    }
    if parent is not None:
        msg["parent_message_uuid"] = parent
    return msg


def claude_export() -> list[dict[str, Any]]:
    """Three conversations: tools and attachments, a branched one, an empty one."""
    t = "2024-05-01T10:{:02d}:00.000000Z".format
    tools = {
        "uuid": "claude-conv-tools", "name": "CSV totals", "summary": "",
        "created_at": t(0), "updated_at": t(9),
        "account": {"uuid": "acc-1"},
        "chat_messages": [
            claude_message("m1", "human", [{"type": "text", "text": "Total of the amounts?"}],
                           t(1), attachments=[{"file_name": "sales.csv", "file_size": 30,
                                               "file_type": "text/csv",
                                               "extracted_content": "item,amount\na,3\nb,4\n"}],
                           files=[{"file_name": "receipt.png", "file_kind": "image"}]),
            claude_message("m2", "assistant", [
                {"type": "thinking", "thinking": "Sum the amount column."},
                {"type": "text", "text": "Let me compute it."},
                {"type": "tool_use", "name": "repl", "input": {"code": "3+4"}},
                {"type": "tool_result", "name": "repl",
                 "content": [{"type": "text", "text": "7"}], "is_error": False},
                {"type": "text", "text": "The total is 7."},
                {"type": "voice_note", "title": "hmm"},
            ], t(2)),
            claude_message("m3", "human", [{"type": "text", "text": "Thanks!"}], t(3)),
            claude_message("m4", "assistant", [{"type": "text", "text": "You're welcome."}],
                           t(4)),
        ],
    }
    root = "00000000-0000-4000-8000-000000000000"
    branched = {
        "uuid": "claude-conv-branch", "name": "Haiku", "created_at": t(10),
        "updated_at": t(20),
        "chat_messages": [
            claude_message("b1", "human", [{"type": "text", "text": "A haiku on rain."}], t(11),
                           parent=root),
            claude_message("b2", "assistant", [{"type": "text", "text": "Rain on the roof."}],
                           t(12), parent="b1"),
            claude_message("b3", "assistant", [{"type": "text", "text": "Soft grey rain falls."}],
                           t(13), parent="b1"),
            claude_message("b4", "human", [{"type": "text", "text": "Shorter."}], t(14),
                           parent="b3"),
            claude_message("b5", "assistant", [{"type": "text", "text": "Rain."}], t(15),
                           parent="b4"),
        ],
    }
    empty = {"uuid": "claude-conv-empty", "name": "", "created_at": t(30), "updated_at": t(30),
             "chat_messages": []}
    return [tools, branched, empty]


# --- Open WebUI ------------------------------------------------------------------------


def webui_message(mid: str, parent: str | None, role: str, content: str, ts: int, *,
                  model: str | None = None, files: list[dict[str, Any]] | None = None
                  ) -> dict[str, Any]:
    msg: dict[str, Any] = {"id": mid, "parentId": parent, "childrenIds": [], "role": role,
                           "content": content, "timestamp": ts}
    if model:
        msg.update(model=model, modelName=model, done=True)
    if files:
        msg["files"] = files
    return msg


def webui_export() -> list[dict[str, Any]]:
    """Two chats: one with a regenerated answer, an edit and an image; one with a system prompt."""
    ts = 1_714_550_000
    png = "data:image/png;base64," + base64.b64encode(PNG_BYTES).decode()
    msgs = [
        webui_message("u1", None, "user", "What is in this picture?", ts,
                      files=[{"type": "image", "url": png}]),
        webui_message("a1", "u1", "assistant", "A single pixel.", ts + 5, model="llama3.1:8b"),
        webui_message("a1b", "u1", "assistant", "One white pixel.", ts + 9,
                      model="qwen2.5:7b"),
        webui_message("u2", "a1b", "user", "What colour exactly?", ts + 20),
        webui_message("a2", "u2", "assistant", "White-ish.", ts + 25, model="qwen2.5:7b"),
        webui_message("u2b", "a1b", "user", "Is it transparent?", ts + 40),
        webui_message("a2b", "u2b", "assistant", "No.", ts + 45, model="qwen2.5:7b"),
    ]
    by_id = {m["id"]: m for m in msgs}
    for m in msgs:
        if m["parentId"]:
            by_id[m["parentId"]]["childrenIds"].append(m["id"])
    first = {
        "id": "webui-1", "user_id": "u", "title": "A pixel",
        "chat": {"id": "", "title": "A pixel", "models": ["qwen2.5:7b"], "params": {},
                 "history": {"messages": by_id, "currentId": "a2"},
                 "messages": [by_id[k] for k in ("u1", "a1b", "u2", "a2")],
                 "tags": [], "timestamp": ts * 1000},
        "updated_at": ts + 25, "created_at": ts, "share_id": None, "archived": False,
        "pinned": False, "meta": {}, "folder_id": None,
    }
    sys_msgs = [
        webui_message("s0", None, "system", "You are a pirate.", ts + 100),
        webui_message("s1", "s0", "user", "Hello", ts + 101),
        webui_message("s2", "s1", "assistant", "Arr!", ts + 102, model="llama3.1:8b"),
    ]
    second = {
        "id": "webui-2", "title": "Pirate",
        "chat": {"title": "Pirate", "history": {"messages": {m["id"]: m for m in sys_msgs},
                                                "currentId": "s2"}},
        "updated_at": ts + 102, "created_at": ts + 100,
    }
    return [first, second]
