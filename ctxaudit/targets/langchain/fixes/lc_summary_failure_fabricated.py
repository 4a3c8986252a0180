"""LC-SUMMARY-FAILURE-FABRICATED (S6/S7): a failed summary call propagates; the step
fails and the history stays as it was, instead of being replaced by the error's text."""

from ctxaudit.fixes import Edit, Fix, Form

SUMMARIZATION = "langchain/agents/middleware/summarization.py"
FABRICATED = '            return f"Error generating summary: {e!s}"\n'
RAISED = "            raise\n"

FIX = Fix(
    finding="LC-SUMMARY-FAILURE-FABRICATED",
    why="the summarizer's error is raised again instead of returned as the summary text",
    forms=(
        Form(
            versions="*",
            edits=(
                Edit(
                    SUMMARIZATION,
                    "            return response.text.strip()\n        except Exception as e:\n"
                    + FABRICATED
                    + "\n    async def",
                    "            return response.text.strip()\n        except Exception:\n"
                    + RAISED
                    + "\n    async def",
                ),
                Edit(
                    SUMMARIZATION,
                    "            return response.text.strip()\n        except Exception as e:\n"
                    + FABRICATED
                    + "\n    def",
                    "            return response.text.strip()\n        except Exception:\n"
                    + RAISED
                    + "\n    def",
                ),
            ),
        ),
    ),
)
