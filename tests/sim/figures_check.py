#!/usr/bin/env python3
"""Check the figures of one `rubick sim --seeds ... --out DIR` run (tests/sim/figures.sh).

    figures_check.py DIR

  (a) every fig-NAME.pdf renders (pdftoppm -r 150 -gray) to a picture with ink, and
      in fig-bars the whiskers stop at the frame: right under the frame's bottom
      line there is a blank gap before the category labels, and no column below
      the frame carries a vertical stroke longer than a line of text;
  (b) report.html, rendered by headless chromium, shows the figures: thousands of
      coloured pixels (bars and lines; the table's swatches are a few hundred) -
      skipped with a message when /usr/bin/chromium is absent;
  (c) every fig-NAME.svg, and every <svg> of report.html, is standalone: the SVG
      namespace on its root, parses as XML; the page's SVGs are the files' own,
      and no id repeats across the page;
  (d) under --seeds (summary.json has "seeds"), the JCT CDF's caption says every seed's
      jobs are pooled.
Only python3's standard library: PGM and PNG are decoded here.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

NAMES = ["bars", "jct-cdf", "gpu-util", "queue", "gpu-hours", "reconfigs"]
SVG_NS = "http://www.w3.org/2000/svg"
DPI = 150
problems = []


def fail(msg):
    problems.append(msg)
    print("FAIL:", msg)


def read_pgm(path):
    """(width, height, rows as bytes) of a binary PGM (P5, maxval 255)."""
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:
        m = re.compile(rb"\s*(#[^\n]*\n\s*)*(\S+)").match(data, pos)
        fields.append(m.group(2))
        pos = m.end()
    assert fields[0] == b"P5" and fields[3] == b"255", fields
    w, h = int(fields[1]), int(fields[2])
    pix = data[pos + 1:]
    return w, h, [pix[y * w:(y + 1) * w] for y in range(h)]


def render_pdf(pdf, tmp):
    stem = os.path.join(tmp, os.path.basename(pdf)[:-4])
    subprocess.run(["pdftoppm", "-r", str(DPI), "-gray", "-singlefile", pdf, stem], check=True)
    return read_pgm(stem + ".pgm")


def check_pdf(name, w, h, rows):
    dark = sum(sum(1 for v in r if v < 200) for r in rows)
    # A 3.4 in figure at 150 dpi is ~510 px wide; a frame, labels and data ink >= 2% of it.
    if dark < 0.02 * w * h:
        fail(f"fig-{name}.pdf: nearly blank ({dark} dark pixels of {w * h})")
    print(f"fig-{name}.pdf: {w}x{h} px, {dark} dark pixels")


def check_bars_clipped(w, h, rows):
    """The bar figure's ink below the frame is the category labels and the axis title."""
    # The frame's bottom line: the lowest row dark over more than half the width
    # (bars stand on it, the grid is light grey, labels are short).
    long_rows = [y for y in range(h) if sum(1 for v in rows[y] if v < 160) > w // 2]
    if not long_rows:
        return fail("fig-bars.pdf: no frame line found")
    bottom = long_rows[-1]
    # The frame's sides: columns dark over nine tenths of the rows between top and bottom.
    top = long_rows[0]
    sides = [x for x in range(w)
             if sum(1 for y in range(top, bottom + 1) if rows[y][x] < 160) > 0.9 * (bottom - top)]
    if len(sides) < 2 or bottom - top < 50:
        return fail(f"fig-bars.pdf: no frame found (rows {top}..{bottom}, sides {sides[:4]})")
    x0, x1 = sides[0], sides[-1]
    # (1) The labels' top sits ~4 pt under the frame: the 2.5 pt right under it are blank.
    gap = round(2.5 / 72 * DPI)
    for y in range(bottom + 2, bottom + 2 + gap):
        ink = [x for x in range(x0 + 2, x1 - 1) if rows[y][x] < 200]
        if ink:
            return fail(f"fig-bars.pdf: ink {len(ink)} px at row {y}, {y - bottom} px under the "
                        f"frame (x {ink[0]}..{ink[-1]}): a whisker runs out of the plot")
    # (2) No vertical stroke below the frame taller than a text line (7-8 pt letters).
    tall = round(9 / 72 * DPI)
    for x in range(x0, x1 + 1):
        run = best = 0
        for y in range(bottom + 2, h):
            run = run + 1 if rows[y][x] < 160 else 0
            best = max(best, run)
        if best > tall:
            return fail(f"fig-bars.pdf: a {best} px vertical stroke below the frame at x {x}")
    print(f"fig-bars.pdf: frame x {x0}..{x1}, rows {top}..{bottom}; nothing runs below it")


def png_pixels(path):
    """(width, height, channels, rows) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = ihdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, ihdr
    ch = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = w * ch
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def check_html_rendered(html, tmp):
    chromium = "/usr/bin/chromium"
    if not os.path.exists(chromium):
        print("SKIP (b): /usr/bin/chromium is absent; the page was not rendered")
        return
    shot = os.path.join(tmp, "shot.png")
    env = dict(os.environ, HOME=tmp)
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", f"--user-data-dir={tmp}/chrome",
                        f"--screenshot={shot}", "--window-size=900,3600",
                        "file://" + os.path.abspath(html)],
                       env=env, capture_output=True, text=True, timeout=120)
    if not os.path.exists(shot):
        return fail(f"chromium wrote no screenshot (exit {r.returncode}): {r.stderr[-500:]}")
    w, h, ch, rows = png_pixels(shot)
    ink = colour = 0
    for row in rows:
        for i in range(0, len(row), ch):
            r_, g, b = row[i], row[i + 1], row[i + 2]
            if r_ < 235 or g < 235 or b < 235:
                ink += 1
            if max(r_, g, b) - min(r_, g, b) > 60:
                colour += 1
    print(f"report.html in chromium: {w}x{h} px, {ink} non-white, {colour} coloured")
    if ink < 0.02 * w * h:
        fail(f"report.html renders nearly blank ({ink} non-white pixels of {w * h})")
    # The figures' bars and lines are coloured; the table's swatches alone are ~200 px.
    if colour < 20000:
        fail(f"report.html shows no figures: {colour} coloured pixels")


def check_svg(label, text):
    head = text[:400]
    if f'xmlns="{SVG_NS}"' not in head:
        return fail(f"{label}: no xmlns=\"{SVG_NS}\" on the root")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        return fail(f"{label}: not XML: {e}")
    if root.tag != "{%s}svg" % SVG_NS:
        fail(f"{label}: root is {root.tag}")


def main():
    out = sys.argv[1]
    tmp = tempfile.mkdtemp()
    try:
        for name in NAMES:
            pdf = os.path.join(out, f"fig-{name}.pdf")
            if not os.path.exists(pdf):
                fail(f"{pdf} was not written")
                continue
            w, h, rows = render_pdf(pdf, tmp)
            check_pdf(name, w, h, rows)
            if name == "bars":
                check_bars_clipped(w, h, rows)
        files = {}
        for name in NAMES:
            p = os.path.join(out, f"fig-{name}.svg")
            if not os.path.exists(p):
                fail(f"{p} was not written")
                continue
            files[name] = open(p, encoding="utf-8").read()
            check_svg(f"fig-{name}.svg", files[name])
        html = open(os.path.join(out, "report.html"), encoding="utf-8").read()
        inline = re.findall(r'<figure id="fig-([a-z-]+)">\n(<svg.*?</svg>)', html, re.S)
        if [n for n, _ in inline] != NAMES:
            fail(f"report.html figures: {[n for n, _ in inline]}, want {NAMES}")
        for name, svg in inline:
            check_svg(f"report.html fig-{name}", svg)
            body = files.get(name, "")
            body = body[body.index("\n") + 1:] if body.startswith("<?xml") else body
            if svg.strip() != body.strip():
                fail(f"report.html's fig-{name} is not fig-{name}.svg")
        ids = re.findall(r'\bid="([^"]+)"', html)
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            fail(f"report.html repeats ids across figures: {dup[:5]}")
        seeds = json.load(open(os.path.join(out, "summary.json"))).get("seeds")
        if seeds:
            cap = re.search(r'<figcaption>fig-jct-cdf: ([^<]*)</figcaption>', html)
            want = f"; all {seeds['n']} seeds pooled ({seeds['first']}-{seeds['last']})"
            if not cap or want not in cap.group(1):
                fail(f"fig-jct-cdf caption {cap.group(1) if cap else None!r} lacks {want!r}")
            else:
                print(f"fig-jct-cdf: {want[2:]}")
        check_html_rendered(os.path.join(out, "report.html"), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("figures: all passed" if not problems else f"figures: {len(problems)} problem(s)")
    sys.exit(1 if problems else 0)


main()
