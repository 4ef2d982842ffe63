"""Conversations in the OpenAI chat format, read and checked: every problem is one InputError before any call.

A conversation is a list of messages ``{"role": ..., "content": ...}`` (or its JSON text, or a request body
``{"messages": [...]}``). Roles: system, developer, user, assistant, tool (and the older function). Content is
text, a list of parts (text parts are read, any other part is shown as ``[image_url]`` and the like), or None for an
assistant message that only calls tools. An assistant's ``tool_calls`` (``{"id", "function": {"name",
"arguments"}}``) and the older ``function_call`` are kept; a tool result must answer a call made before it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from .._errors import InputError
from ..engine._request import unencodable

Role = Literal["system", "developer", "user", "assistant", "tool", "function"]
ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool", "function")
# Messages that make up the assistant's side of a turn: its replies and the results of the tools it called.
REPLY_ROLES = ("assistant", "tool", "function")


class ToolCall(BaseModel):
    """A tool (function) the assistant called: its name, the arguments as written, and the call's id."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: str = ""
    id: str | None = None


class Message(BaseModel):
    """One message of a conversation. `content` is its text ("" when it has none, as a tool-calling assistant
    message may); `tool_call_id` and `name` say which call a tool or function result answers."""

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        """The message in the OpenAI chat format."""
        message: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            message["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            message["name"] = self.name
        return message


class Conversation(BaseModel):
    """A checked conversation: its messages in order (see `parse_conversation`)."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]

    def __len__(self) -> int:
        return len(self.messages)

    def replies(self) -> list[tuple[int, int]]:
        """Each of the assistant's turns as a [start, end) span of messages: a run of assistant messages and the
        tool results between them, holding at least one assistant message."""
        spans: list[tuple[int, int]] = []
        start: int | None = None
        for i, message in enumerate(self.messages):
            if message.role in REPLY_ROLES:
                if start is None:
                    start = i
            elif start is not None:
                spans.append((start, i))
                start = None
        if start is not None:
            spans.append((start, len(self.messages)))
        return [(s, e) for s, e in spans if any(m.role == "assistant" for m in self.messages[s:e])]

    def to_openai(self) -> list[dict[str, Any]]:
        """The messages in the OpenAI chat format."""
        return [m.to_openai() for m in self.messages]

    def to_json(self) -> str:
        return json.dumps(self.to_openai(), ensure_ascii=False)


def parse_conversation(value: Any, position: int | None = None, batch: str | None = None) -> Conversation:
    """A Conversation from a list of message dicts, their JSON text, a request body with "messages", or a
    Conversation; InputError naming the conversation (`position`, and the argument it came in, `batch`, when a
    call takes more than one) and message when it is malformed."""
    where = conversation_name(position, batch)
    if isinstance(value, Conversation):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InputError(f"{where} is text but not JSON ({exc.msg} at offset {exc.pos})") from None
    if isinstance(value, Mapping) and "messages" in value:
        value = value["messages"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        raise InputError(f"{where} is missing (None/NaN)")
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InputError(f"{where} must be a list of messages, got {type(value).__name__}")
    raw = list(value)
    if not raw:
        raise InputError(f"{where} is empty: no message to judge")
    messages: list[Message] = []
    calls: set[str] = set()
    functions: set[str] = set()
    for i, item in enumerate(raw):
        message = _message(item, f"{where}, message {i}")
        if message.role == "tool":
            if message.tool_call_id is None:
                raise InputError(f"{where}, message {i}: a tool result without tool_call_id")
            if message.tool_call_id not in calls:
                raise InputError(
                    f"{where}, message {i}: a tool result without its call (no earlier assistant message calls "
                    f"{message.tool_call_id!r})"
                )
        if message.role == "function" and message.name not in functions:
            raise InputError(f"{where}, message {i}: a function result without its call ({message.name!r})")
        for call in message.tool_calls:
            if call.id is not None:
                calls.add(call.id)
            functions.add(call.name)
        messages.append(message)
    return Conversation(messages=tuple(messages))


def parse_conversations(values: Any, name: str = "conversations") -> list[Conversation]:
    """Every conversation of a batch checked (see `parse_conversation`); InputError when the batch is empty."""
    if isinstance(values, (str, Conversation)) or (isinstance(values, Mapping) and "messages" in values):
        values = [values]
    elif _looks_like_one_conversation(values):
        raise InputError(
            f"{name} must be a list of conversations, each a list of messages; got one conversation's messages "
            "(wrap it in a list)"
        )
    try:
        batch = list(values)
    except TypeError:
        raise InputError(f"{name} must be a list of conversations, got {type(values).__name__}") from None
    if not batch:
        raise InputError(f"nothing to judge: {name} is empty")
    side = None if name == "conversations" else name
    return [parse_conversation(v, i, side) for i, v in enumerate(batch)]


def conversation_name(position: int | None, batch: str | None = None) -> str:
    """How an error names a conversation: "conversation 3", or "conversation 3 of conversations_b" where a call
    takes conversations in more than one argument."""
    where = "conversation" if position is None else f"conversation {position}"
    return f"{where} of {batch}" if batch else where


def _looks_like_one_conversation(values: Any) -> bool:
    """A flat list of message dicts given where a list of conversations is expected."""
    if not isinstance(values, Sequence) or isinstance(values, str) or not values:
        return False
    return all(isinstance(v, Mapping) and "role" in v for v in values)


def _message(item: Any, where: str) -> Message:
    if hasattr(item, "model_dump") and not isinstance(item, Mapping):
        item = item.model_dump()  # an OpenAI SDK message object
    if not isinstance(item, Mapping):
        raise InputError(f"{where} must be a dict with role and content, got {type(item).__name__}")
    if "role" not in item or item["role"] is None:
        raise InputError(f"{where} has no role")
    role = item["role"]
    if role not in ROLES:
        raise InputError(f"{where} has unknown role {role!r} (expected one of {', '.join(ROLES)})")
    tool_calls = _tool_calls(item, where) if role == "assistant" else ()
    content = item.get("content")
    if content is None or (isinstance(content, float) and math.isnan(content)):
        if not tool_calls:
            raise InputError(f"{where} ({role}) has no content")
        text = ""
    else:
        text = _text(content, where)
    for part in (text, *(c.arguments for c in tool_calls)):
        problem = unencodable(part)
        if problem is not None:
            raise InputError(f"{where} {problem}")
    tool_call_id = item.get("tool_call_id")
    name = item.get("name")
    if role == "function" and not isinstance(name, str):
        raise InputError(f"{where}: a function result without the function's name")
    return Message(
        role=role,
        content=text,
        tool_calls=tool_calls,
        tool_call_id=str(tool_call_id) if tool_call_id is not None else None,
        name=str(name) if name is not None else None,
    )


def _text(content: Any, where: str) -> str:
    """The text of a message's content: a string, or a list of parts (text parts joined, others named)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) or not hasattr(content, "__iter__"):
        raise InputError(f"{where} has content of type {type(content).__name__}; expected text or a list of parts")
    pieces = []
    for part in content:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif isinstance(part, Mapping) and isinstance(part.get("type"), str):
            pieces.append(f"[{part['type']}]")
        else:
            raise InputError(f"{where} has a content part that is neither text nor a typed part: {part!r:.80}")
    return "\n".join(pieces)


def _tool_calls(item: Mapping[str, Any], where: str) -> tuple[ToolCall, ...]:
    """An assistant message's tool calls (and an older `function_call`), checked."""
    raw = item.get("tool_calls")
    calls: list[ToolCall] = []
    if raw is not None and not (isinstance(raw, float) and math.isnan(raw)):
        if isinstance(raw, (str, Mapping)) or not hasattr(raw, "__iter__"):
            raise InputError(f"{where}: tool_calls must be a list")
        for k, call in enumerate(raw):
            if hasattr(call, "model_dump") and not isinstance(call, Mapping):
                call = call.model_dump()
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
                raise InputError(f"{where}: tool call {k} has no function name")
            call_id = call.get("id")
            calls.append(
                ToolCall(
                    name=function["name"],
                    arguments=_arguments(function.get("arguments")),
                    id=str(call_id) if call_id is not None else None,
                )
            )
    legacy = item.get("function_call")
    if isinstance(legacy, Mapping):
        if not isinstance(legacy.get("name"), str):
            raise InputError(f"{where}: function_call has no name")
        calls.append(ToolCall(name=legacy["name"], arguments=_arguments(legacy.get("arguments"))))
    return tuple(calls)


def _arguments(arguments: Any) -> str:
    """A call's arguments as text: as written when given as text, else as compact JSON."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)
