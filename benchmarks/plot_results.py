"""Speedup plots (PNG) beside benchmark tables.

    python benchmarks/plot_results.py FILE.md [FILE.md ...]

Reads each markdown table of FILE.md that has `<backend> speedup` columns (speedup over
eager, one row per model; a `dtype` column, where there is one, makes a plot per dtype)
and writes FILE.png beside it: per model, one bar per backend, eager's 1.0 as a
line, and the geomean row (or, where the table has none, the geomean of its rows) last.
benchmarks/run.py calls it on its --out file; GPU results (benchmarks/gpu_zoo.py run,
on a machine without matplotlib) are plotted here afterwards.
"""
import math
import os
import statistics
import sys


def _cells(line: str):
    return [cell.strip().strip("*") for cell in line.strip().strip("|").split("|")]


def speedup_tables(text: str):
    """[(title, row labels, {backend: [speedup per row]})] for each table with speedup
    columns, split by dtype where the table has a dtype column; a geomean row is kept as
    the last row (label "geomean")."""
    tables = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("|") or index + 1 >= len(lines) or "---" not in lines[index + 1]:
            continue
        header = _cells(line)
        columns = {name[:-len(" speedup")]: i for i, name in enumerate(header)
                   if name.endswith(" speedup")}
        if not columns:
            continue
        dtype_column = header.index("dtype") if "dtype" in header else None
        groups = {}  # dtype ("" without a dtype column) -> (labels, values)
        for row in lines[index + 2:]:
            if not row.startswith("|"):
                break
            cells = _cells(row)
            try:
                parsed = {b: float(cells[i].rstrip("x")) for b, i in columns.items()}
            except (ValueError, IndexError):
                continue  # a row without numbers (a failed model)
            dtype = cells[dtype_column] if dtype_column is not None else ""
            labels, values = groups.setdefault(dtype, ([], {b: [] for b in columns}))
            labels.append(cells[0])
            for backend, value in parsed.items():
                values[backend].append(value)
        tables += [(dtype, labels, values) for dtype, (labels, values) in groups.items()]
    return tables


def plot(path_md: str) -> str:
    """Writes the plot of `path_md`'s speedup tables to the .png beside it; returns its
    path ("" when the file has no such table)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    with open(path_md) as handle:
        tables = speedup_tables(handle.read())
    if not tables:
        return ""
    widest = max(len(labels) * len(values) for _, labels, values in tables)
    figure, axes = plt.subplots(len(tables), 1, squeeze=False,
                                figsize=(max(8, 0.3 * widest), 4.2 * len(tables)))
    for axis, (title, labels, values) in zip(axes[:, 0], tables):
        if labels[-1] != "geomean":
            labels = labels + ["geomean"]
            values = {backend: v + [math.exp(statistics.mean(math.log(x) for x in v))]
                      for backend, v in values.items()}
        width = 0.8 / len(values)
        for number, (backend, speedups) in enumerate(values.items()):
            positions = [i + (number - (len(values) - 1) / 2) * width
                         for i in range(len(labels))]
            axis.bar(positions, speedups, width, label=backend)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_yscale("log")
        as_ratio = FuncFormatter(lambda value, _: f"{value:g}x")
        axis.yaxis.set_major_formatter(as_ratio)
        axis.yaxis.set_minor_formatter(as_ratio)
        axis.tick_params(axis="y", which="minor", labelsize=7)
        axis.set_ylabel("speedup over eager")
        axis.set_xticks(range(len(labels)))
        axis.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
        axis.legend(fontsize=8)
        axis.grid(axis="y", which="both", alpha=0.3)
        axis.set_title(os.path.basename(path_md) + (f": {title}" if title else ""),
                       fontsize=10)
    figure.tight_layout()
    path_png = os.path.splitext(path_md)[0] + ".png"
    figure.savefig(path_png, dpi=110)
    plt.close(figure)
    return path_png


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        written = plot(path)
        print(f"{path}: " + (f"plot {written}" if written else "no speedup table"))


if __name__ == "__main__":
    main()
