// HTML reports of failure artifacts and gate runs. The renderers are pure; load.ts does the I/O.
export { renderArtifactReport } from './artifact-report.js';
export { renderGateReport, artifactReportHref, ARTIFACT_REPORT_FILE, GATE_REPORT_FILE, type GateReportInput, type GateReportOptions } from './gate-report.js';
export { drawArtifactReport, writeArtifactReport, writeGateReport, readReportArtifact, openArtifactReport, browserOpener, formatOpenResult, type OpenResult, type OpenOptions } from './load.js';
export type { ReportArtifact, CutImages, ImageFiles, ImageEntry } from './types.js';
