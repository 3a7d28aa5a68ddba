"""Figures of the /positions page, one module per part (sinusoidal, learned, relative, alibi, rope, rope_bands),
built from the view dataclasses of core.positions. Shared blocks: `common` (heatmaps, curves, bars), `circle`,
`log_axis`. Every function that writes words takes `t(key, **fmt)`, the [positions.figure] catalog
section."""
