"""MetaClaw as Hermes' memory provider.

Hermes talks to its provider directly (any key or sign-in it has); MetaClaw, running on this
machine, gives each turn the block it learned for it (skills, memories, standing rules) and
learns from each finished turn. It talks to MetaClaw's plugin API on loopback with the admin
token MetaClaw writes for its own command line (`<home>/run/`): no key goes into Hermes' files.
The home is the one this plugin was installed from (`metaclaw agent connect hermes --plugin`
links `$HERMES_HOME/plugins/metaclaw` to `<home>/integrations/hermes/metaclaw`), else
`$METACLAW_HOME`, else `~/.metaclaw`.

MetaClaw not running, slow or failing: Hermes runs as if this provider were absent (each call
waits at most `TIMEOUT_S`), and it says so once in Hermes' log.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

from agent.memory_provider import MemoryProvider

logger = logging.getLogger(__name__)

AGENT = "hermes"
# Each call to MetaClaw waits at most this long: a turn must never wait on it.
TIMEOUT_S = 2.0


def metaclaw_home() -> Path:
    here = Path(__file__).resolve().parent
    if here.parent.name == "hermes" and here.parent.parent.name == "integrations":
        installed = here.parents[2]
        if (installed / "config.yaml").exists() or (installed / "run").is_dir():
            return installed
    home = os.environ.get("METACLAW_HOME")
    return Path(home) if home else Path.home() / ".metaclaw"


class MetaClawMemory(MemoryProvider):
    """Prefetch = MetaClaw's block for the user's message; sync_turn = the finished turn;
    on_session_end = the session ended (MetaClaw learns from it)."""

    def __init__(self) -> None:
        self._session = ""
        self._primary = True
        self._warned = False
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "metaclaw"

    def is_available(self) -> bool:
        # No network here (Hermes' rule): MetaClaw has run on this machine.
        return (metaclaw_home() / "run").is_dir()

    def initialize(self, session_id: str, **kwargs) -> None:
        self._session = session_id
        # Cron and subagent contexts are not the user speaking: nothing is learned from them.
        self._primary = kwargs.get("agent_context", "primary") == "primary"

    def on_session_switch(self, new_session_id: str, **kwargs) -> None:
        if self._session and self._session != new_session_id:
            self._post_later("session_end", {"session_id": self._session})
        self._session = new_session_id

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        return []

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        if not query.strip():
            return ""
        answer = self._post(
            "context",
            {"session_id": session_id or self._session, "agent": AGENT, "prompt": query},
        )
        return (answer or {}).get("block", "")

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: Optional[List[Dict[str, Any]]] = None,
    ) -> None:
        if not self._primary or not user_content.strip():
            return
        tools = sorted({
            call.get("function", {}).get("name", "")
            for m in (messages or [])[-20:]
            if m.get("role") == "assistant"
            for call in (m.get("tool_calls") or [])
        } - {""})
        self._post_later("turn", {
            "session_id": session_id or self._session,
            "agent": AGENT,
            "user": user_content,
            "assistant": assistant_content or "",
            "tools": tools,
        })

    def on_session_end(self, messages: List[Dict[str, Any]]) -> None:
        if self._primary and self._session:
            # At exit: sent now, not from a thread the interpreter may not wait for.
            self._post("session_end", {"session_id": self._session})

    def _post_later(self, route: str, body: Dict[str, Any]) -> None:
        threading.Thread(target=self._post, args=(route, body), daemon=True,
                         name=f"metaclaw-{route}").start()

    def _post(self, route: str, body: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        run = metaclaw_home() / "run"
        try:
            port = (run / "port").read_text().strip()
            token = (run / "admin_token").read_text().strip()
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/plugin/{route}",
                data=json.dumps(body).encode(),
                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                return json.load(answer)
        except (OSError, ValueError, urllib.error.URLError) as e:
            with self._lock:
                if not self._warned:
                    self._warned = True
                    logger.warning("MetaClaw is not answering (%s); Hermes runs without it", e)
            return None


def register(ctx) -> None:
    ctx.register_memory_provider(MetaClawMemory())
