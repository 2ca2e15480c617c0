#!/usr/bin/env node
/**
 * Draws bench-results/bench.json (scripts/bench.js) as an SVG bar chart for
 * docs/performance.md, written by hand so no charting dependency is needed.
 *
 *   node scripts/bench-chart.js [--in bench-results/bench.json] [--out docs/bench.svg]
 *
 * One panel per unit (MB/s, ms, ratio...), since bars of different units
 * share no scale; each panel's scale starts at zero so lengths compare
 * honestly (the untuned all-reduce is meant to look as small as it is).
 * A target is drawn as a dashed line; a measurement that failed is shown as
 * its error, never as a bar.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { meetsTarget } from './bench-lib.js';

/** Room right of the longest bar for its value and target. */
const VALUE_WIDTH = 250;
const BAR_WIDTH = 340;
/** Roughly the advance of one 13px sans-serif character, to size the label column. */
const CHAR_WIDTH = 7;
const ROW_HEIGHT = 24;
const PANEL_GAP = 18;
const TITLE_HEIGHT = 52;
const COLORS = { bar: '#4878a8', missed: '#c0504d', target: '#333', text: '#222', muted: '#777' };

function escapeXml(text) {
  return String(text).replace(
    /[<>&'"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c],
  );
}

/** Whole numbers as they are; others to 3-4 significant digits (713, 56.1, 5.62, 0.998). */
function formatValue(value) {
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toFixed(digits);
}

function panelsByUnit(results) {
  const panels = new Map();
  for (const row of results) {
    const unit = row.error !== undefined ? 'failed' : row.unit;
    if (!panels.has(unit)) panels.set(unit, []);
    panels.get(unit).push(row);
  }
  return [...panels.entries()];
}

function renderPanel(unit, rows, top, labelWidth) {
  const parts = [];
  const measured = rows.filter((row) => row.error === undefined);
  const targets = measured.flatMap((row) =>
    row.target ? [row.target.min, row.target.max].filter((t) => t !== undefined) : [],
  );
  const scaleMax = Math.max(...measured.map((row) => row.value), ...targets, Number.MIN_VALUE);
  const x0 = labelWidth + 10;
  parts.push(
    `<text x="10" y="${top + 16}" font-weight="bold" fill="${COLORS.text}">${escapeXml(unit)}</text>`,
  );
  rows.forEach((row, index) => {
    const y = top + 24 + index * ROW_HEIGHT;
    parts.push(
      `<text x="${labelWidth}" y="${y + 15}" text-anchor="end" fill="${COLORS.text}">${escapeXml(row.name)}</text>`,
    );
    if (row.error !== undefined) {
      parts.push(
        `<text x="${x0}" y="${y + 15}" fill="${COLORS.missed}">error: ${escapeXml(row.error.slice(0, 60))}</text>`,
      );
      return;
    }
    // A value that rounds to under a pixel still gets a sliver, so a bar is never invisible.
    const length = Math.max(2, (Math.max(0, row.value) / scaleMax) * BAR_WIDTH);
    const fill = meetsTarget(row) === false ? COLORS.missed : COLORS.bar;
    parts.push(
      `<rect x="${x0}" y="${y + 3}" width="${length.toFixed(1)}" height="${ROW_HEIGHT - 8}" fill="${fill}"/>`,
    );
    const bounds = [
      [row.target?.min, '≥'],
      [row.target?.max, '≤'],
    ].filter(([bound]) => bound !== undefined);
    const targetText = bounds.map(([bound, sign]) => `${sign} ${formatValue(bound)}`).join(', ');
    parts.push(
      `<text x="${(x0 + length + 6).toFixed(1)}" y="${y + 15}" fill="${COLORS.text}">${escapeXml(formatValue(row.value))} ${escapeXml(row.unit)}${targetText ? `<tspan dx="5" fill="${COLORS.muted}">(target ${escapeXml(targetText)})</tspan>` : ''}</text>`,
    );
    for (const [bound] of bounds) {
      const x = (x0 + (bound / scaleMax) * BAR_WIDTH).toFixed(1);
      parts.push(
        `<line x1="${x}" x2="${x}" y1="${y + 1}" y2="${y + ROW_HEIGHT - 1}" stroke="${COLORS.target}" stroke-dasharray="3,2"/>`,
      );
    }
  });
  return { svg: parts.join('\n'), height: 24 + rows.length * ROW_HEIGHT };
}

/** The SVG document for one bench.json object ({ date, machine, results }). */
export function renderChart(bench) {
  const body = [];
  let top = TITLE_HEIGHT;
  const longest = Math.max(...bench.results.map((row) => row.name.length));
  const labelWidth = Math.min(640, Math.max(200, longest * CHAR_WIDTH));
  const width = labelWidth + 10 + BAR_WIDTH + VALUE_WIDTH;
  for (const [unit, rows] of panelsByUnit(bench.results)) {
    const panel = renderPanel(unit, rows, top, labelWidth);
    body.push(panel.svg);
    top += panel.height + PANEL_GAP;
  }
  const machine = bench.machine
    ? `Node ${bench.machine.node}, ${bench.machine.cpus} CPUs, ${bench.machine.platform}`
    : '';
  const subtitle = [bench.date?.slice(0, 10), machine, bench.runs ? `runs ${bench.runs}` : '']
    .filter(Boolean)
    .join(' · ');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${top}" viewBox="0 0 ${width} ${top}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${top}" fill="#fff"/>`,
    `<text x="10" y="22" font-size="17" font-weight="bold" fill="${COLORS.text}">nccl-run benchmark</text>`,
    `<text x="10" y="40" fill="${COLORS.muted}">${escapeXml(subtitle)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const { values } = parseArgs({
    options: {
      in: { type: 'string', default: join(root, 'bench-results/bench.json') },
      out: { type: 'string', default: join(root, 'docs/bench.svg') },
    },
  });
  const bench = JSON.parse(readFileSync(values.in, 'utf8'));
  if (!Array.isArray(bench.results)) {
    throw new Error(`${values.in}: expected an object with a "results" array (bench.js output)`);
  }
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, renderChart(bench));
  console.log(`chart of ${bench.results.length} measurements written to ${values.out}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (error) {
    console.error(error.message);
    process.exitCode = 1;
  }
}
