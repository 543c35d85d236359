"""The pytest plugin proper, registered only for a stackcheck run: options and activation
(options), session hooks (hooks), the report's recorder, fixtures, homework mode, the course gate,
the baseline comparison and the hook spec stackcheck adds. Nothing below imports it."""
