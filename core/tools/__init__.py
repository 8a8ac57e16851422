"""Tools the model can call over Parley's own data: memory, skills and session search.

* :mod:`parley.core.tools.registry` — the :class:`Tool` protocol, input checks, and
  :func:`run_tool` (a tool's failure becomes an ``is_error`` result, never a crash);
* :mod:`parley.core.tools.memory` — a writable memory per space and ``set_context``;
* :mod:`parley.core.tools.skills` — Markdown skills, ``load_context`` / ``unload_context``
  and the stub that replaces an unloaded skill on the wire;
* :mod:`parley.core.tools.session_search` — ``session_search`` over every session;
* :mod:`parley.core.tools.system_prompt` — the system prompt with its blocks, frozen per session;
* :mod:`parley.core.tools.executor` — :class:`ToolExecutor`, all of the above for the run loop;
* :mod:`parley.core.tools.loop` — the tool loop's rules (rounds cap, tools rejected by a server).
"""

from parley.core.tools.executor import ToolExecutor
from parley.core.tools.memory import Memory, MemoryStore, MemoryTooLong
from parley.core.tools.registry import Tool, ToolContext, ToolError, run_tool
from parley.core.tools.skills import Skill, SkillLibrary

__all__ = [
    "Memory",
    "MemoryStore",
    "MemoryTooLong",
    "Skill",
    "SkillLibrary",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolExecutor",
    "run_tool",
]
