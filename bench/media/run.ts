/**
 * `npm run bench:media`: server RSS while a BENCH_MEDIA_MIB (default 50) MiB
 * upload streams through POST /media and back out of GET /media/{id}.
 * Budget: the steady-state growth stays under 20 MiB (issue 15); exits 1 above it.
 * The cold row also counts the allocator's first high-water mark.
 */
import { measureUploadRss } from './measure.ts';

const BUDGET_MIB = 20;
const report = await measureUploadRss(Number(process.env.BENCH_MEDIA_MIB ?? 50));
console.log('| phase | file | status | upload ms | baseline RSS | upload peak | growth | download peak | growth | budget |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const [name, phase] of Object.entries({ cold: report.cold, steady: report.steady })) {
  console.log(`| ${name} | ${report.fileMiB} MiB | ${phase.status} | ${phase.uploadMs} | ${phase.baselineMiB} MiB | ${phase.uploadPeakMiB} MiB | `
    + `${phase.uploadGrowthMiB} MiB | ${phase.downloadPeakMiB} MiB | ${phase.downloadGrowthMiB} MiB | ${BUDGET_MIB} MiB |`);
}
const { steady } = report;
process.exitCode = steady.status === 201 && steady.uploadGrowthMiB <= BUDGET_MIB && steady.downloadGrowthMiB <= BUDGET_MIB ? 0 : 1;
