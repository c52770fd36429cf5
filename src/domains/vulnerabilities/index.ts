/**
 * The vulnerabilities domain's face: the imported OSV records and their advisories, as the advisory
 * domain (documents, metadata), the libraries domain (advisories per version) and the CLI's import
 * read and write them.
 */
export { importOsvFeed } from "./osv-import.js";
export { syncAdvisoryFeed, type FeedSyncReport } from "./feed-sync.js";
export type { FeedObserver } from "./feed-worker.js";
export { advisoryFromRow } from "./advisory-mapper.js";
export { checkArtifactNames, checkRecordNames } from "./advisory-validation.js";
export { eventViews, severityViews } from "./osv-view.js";
export { advisoriesByUid, advisoriesNamed, advisoryCandidates, filteredAdvisories, nonEmpty, recordsDatabaseSpecific, recordsNamed, type AdvisoryFilter, type AdvisoryRow } from "./store/advisories.js";
export { documentOrderable, listDocuments, type DocumentRow } from "./store/advisory-documents.js";
export { listRecords, metadataOrderable, type OsvRecordRow } from "./store/osv-record-pages.js";
