"""What the fixes of the compacted-mode findings on main's pydantic-ai paths share
(LS-QUERY-COMPACTED-FAILS, LS-STREAMING-QUERY-COMPACTED-FAILS,
LS-A2A-COMPACTED-TURN-LOST): the source lines each one adds. Defines no fix.

Compaction hands the agent's paths an explicit input (a list: summaries, recent turns,
the new input) with the conversation dropped; the pydantic-ai agent takes a prompt
string, so the list was cast to one and the run failed (or, in the A2A executor, the
user's text alone was sent). Each fix sends the explicit input as built, as the
Responses request's ``input`` (``extra_body`` overrides the body pydantic-ai builds from
its prompt), and stores the completed turn against the original input, as main's
/v1/responses does (``append_turn_items_to_conversation``)."""


def explicit_input(
    indent: str, agent: str = "agent", params: str = "responses_params", when: str = ""
) -> str:
    """Lines that make ``agent`` send ``params``' explicit input when it is a list (or,
    with ``when``, when that condition says the request was compacted)."""
    test = when or f"not isinstance({params}.input, str)"
    lines = (
        f"if {test}:  # compacted: the explicit input, as built\n"
        f'    _body = dict(({agent}.model.settings or {{}}).get("extra_body") or {{}})\n'
        f'    _body["input"] = {params}.model_dump(exclude_none=True)["input"]\n'
        f'    {agent}.model_settings = {{**({agent}.model_settings or {{}}), "extra_body": _body}}\n'
        '    prompt = ""  # the request\'s input is the explicit input above\n'
    )
    return "".join(indent + line for line in lines.splitlines(keepends=True))


def store_turn(indent: str, client: str, conversation: str, original: str, answer: str) -> str:
    """Lines that append the compacted turn (the original input and the answer)."""
    lines = (
        "await append_turn_items_to_conversation(\n"
        f"    {client},\n    {conversation},\n    {original},\n"
        f'    [OpenAIResponseMessage(role="assistant", content={answer})],\n'
        ")\n"
    )
    return "".join(indent + line for line in lines.splitlines(keepends=True))


# ruff: noqa: E501  (edits quote the target's lines verbatim)
