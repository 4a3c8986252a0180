# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-B6-SPACED-TOKEN-UNIT (B6): a token cap with whitespace before its unit ('200 k')
did not match the token patterns (ignored as a key; in the legacy string the other
token part moved to the output cap); the fix allows whitespace there, as the time
pattern already does ('30 m')."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-B6-SPACED-TOKEN-UNIT",
    why="the token patterns allow whitespace between the number and its unit ('200 k')",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    "engine/eval_cap.py",
                    '_TOKEN_RE = re.compile(r"^(\\d+\\.?\\d*)(k|m|K|M)?$")\n',
                    '_TOKEN_RE = re.compile(r"^(\\d+\\.?\\d*)\\s*(k|m|K|M)?$")\n',
                ),
                Edit(
                    "engine/eval_cap.py",
                    '_SLASH_TOKEN_RE = re.compile(r"^(\\d+\\.?\\d*)(k|m|K|M)?\\s*/\\s*(\\d+\\.?\\d*)(k|m|K|M)?$")\n',
                    "_SLASH_TOKEN_RE = re.compile(\n"
                    '    r"^(\\d+\\.?\\d*)\\s*(k|m|K|M)?\\s*/\\s*(\\d+\\.?\\d*)\\s*(k|m|K|M)?$"\n'
                    ")\n",
                ),
            ),
        ),
    ),
)
