"""Conversations as judged material: the OpenAI chat format read and checked, what of each conversation is judged
(`target`: "last_turn", "whole", "each_turn"), how its turns are fenced for the judge, and how one too long for
the judge's context is shortened."""

from ._messages import ROLES, Conversation, Message, ToolCall, parse_conversation, parse_conversations
from ._render import TARGETS, JudgedConversation, Target, transcript
from ._shorten import fit_to_context
from ._targets import check_target, judged_views

__all__ = [
    "ROLES",
    "TARGETS",
    "Conversation",
    "JudgedConversation",
    "Message",
    "Target",
    "ToolCall",
    "check_target",
    "fit_to_context",
    "judged_views",
    "parse_conversation",
    "parse_conversations",
    "transcript",
]
