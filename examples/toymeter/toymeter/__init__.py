"""toymeter: a small harness's token meter, hooked up to ctxaudit (see README.md)."""
