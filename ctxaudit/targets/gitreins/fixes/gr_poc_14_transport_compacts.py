# ruff: noqa: E501  (edits quote the target's lines verbatim)
"""GR-POC-14-TRANSPORT-COMPACTS (V6): before 0.14.0 a transport failure whose text says
"Max retries exceeded" matched the context keywords; the fix skips the keyword match
when a non-HTTP requests error is anywhere in the error's chain (as 0.14.0 does)."""

from ctxaudit.fixes import Edit, Fix, Form

FIX = Fix(
    finding="GR-POC-14-TRANSPORT-COMPACTS",
    why="an error that never reached the provider is not read for context keywords",
    forms=(
        Form(
            versions="<0.14.0",
            edits=(
                Edit(
                    "engine/evaluator.py",
                    "                err_msg = str(e).lower()\n"
                    "                if not is_context_error:\n",
                    "                err_msg = str(e).lower()\n"
                    "                transport, link, seen = False, e, set()\n"
                    "                while link is not None and id(link) not in seen:\n"
                    "                    seen.add(id(link))\n"
                    "                    transport = transport or (\n"
                    "                        isinstance(link, requests.exceptions.RequestException)\n"
                    "                        and not isinstance(link, requests.exceptions.HTTPError)\n"
                    "                    )\n"
                    "                    link = link.__cause__ or link.__context__\n"
                    "                if not is_context_error and not transport:\n",
                ),
            ),
        ),
    ),
)
