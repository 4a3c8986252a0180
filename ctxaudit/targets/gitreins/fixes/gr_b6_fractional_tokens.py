"""GR-B6-FRACTIONAL-TOKENS (B6): a token cap that is not a whole number of tokens
('1.5', '0.0001k') was truncated ('0.0001k' to 0: no cap at all); the fix makes it a
configuration error that names the key (max_input_tokens, max_output_tokens,
GITREINS_MAX_*_TOKENS, or cap for the legacy string). The check is exact (decimal),
so it needs no other fix (GR-B6-FLOAT-TRUNCATION's computes the value itself)."""

from ctxaudit.fixes import Edit, Fix, Form

_WHOLE = '__import__("decimal").Decimal({num}) * {{"k": 1000, "m": 10**6}}.get({suf}, 1) % 1'
_EC = "engine/eval_cap.py"


def _key(call: str, key: str) -> Edit:
    return Edit(_EC, f"_parse_tokens({call})", f'_parse_tokens({call}, "{key}")')


FIX = Fix(
    finding="GR-B6-FRACTIONAL-TOKENS",
    why="a token cap that is not a whole number of tokens raises an error naming its key",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    _EC,
                    "def _parse_tokens(raw: str) -> int | None:\n",
                    'def _parse_tokens(raw: str, key: str = "token cap") -> int | None:\n',
                ),
                Edit(
                    _EC,
                    "        value *= 1_000_000\n    return int(value)\n",
                    "        value *= 1_000_000\n"
                    f"    if {_WHOLE.format(num='m.group(1)', suf='suffix')}:\n"
                    '        raise ValueError(f"{key}: {raw.strip()!r} is not a whole number"'
                    ' " of tokens")\n'
                    "    return int(value)\n",
                ),
                Edit(
                    _EC,
                    "    return int(input_val), int(output_val)\n",
                    "    for num, suf in ((m.group(1), input_suffix),"
                    " (m.group(3), output_suffix)):\n"
                    f"        if {_WHOLE.format(num='num', suf='suf')}:\n"
                    '            raise ValueError(f"cap: {raw.strip()!r} is not a whole number"'
                    ' " of tokens")\n'
                    "    return int(input_val), int(output_val)\n",
                ),
                _key("part", "cap"),
                Edit(_EC, "tok = _parse_tokens(raw)\n", 'tok = _parse_tokens(raw, "cap")\n'),
                _key('str(ev["max_input_tokens"])', "max_input_tokens"),
                _key('str(ev["max_output_tokens"])', "max_output_tokens"),
                _key('os.environ["GITREINS_MAX_INPUT_TOKENS"]', "GITREINS_MAX_INPUT_TOKENS"),
                _key('os.environ["GITREINS_MAX_OUTPUT_TOKENS"]', "GITREINS_MAX_OUTPUT_TOKENS"),
            ),
        ),
    ),
)
