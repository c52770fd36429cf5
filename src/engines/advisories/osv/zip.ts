// One zip archive read entry by entry (yauzl with lazyEntries): the central directory is walked one
// record at a time and only the current entry's data is open, so memory does not grow with the archive.

import type { Readable } from "node:stream";
import yauzl, { type Entry, type ZipFile } from "yauzl";

/** An entry of the archive's central directory, its name decoded (CP437 or UTF-8, as the entry says). */
export interface ZipArchiveEntry {
  readonly name: string;
  /** Why the name is unsafe (absolute, a drive letter, or a `..` component), as yauzl judges it; else undefined. */
  readonly unsafeName: string | undefined;
  /** The uncompressed size the archive declares (not trusted: reads are bounded anyway). */
  readonly declaredSize: number;
  readonly encrypted: boolean;
  readonly directory: boolean;
  readonly entry: Entry;
}

export class ZipArchive {
  private failure: Error | undefined;

  private constructor(private readonly zip: ZipFile) {
    // yauzl reports errors of the archive as events; keep the first for the next call to next().
    zip.on("error", (error: Error) => {
      this.failure ??= error;
    });
  }

  /** Opens the archive and reads its end of central directory; rejects for a file that is not a zip. */
  static open(path: string): Promise<ZipArchive> {
    return new Promise((resolve, reject) => {
      // decodeStrings: false so that an unsafe name is reported for its entry (see next()) instead of
      // yauzl failing the whole archive; names are decoded and validated with yauzl's own functions.
      yauzl.open(path, { lazyEntries: true, autoClose: true, decodeStrings: false, validateEntrySizes: true }, (error, zip) => {
        if (error || !zip) reject(error ?? new Error("cannot open the archive"));
        else resolve(new ZipArchive(zip));
      });
    });
  }

  /** How many entries the central directory lists (directories and non-record files included). */
  get entryCount(): number {
    return this.zip.entryCount;
  }

  /** The next entry in central directory order, or undefined after the last; rejects if the directory is corrupt. */
  next(): Promise<ZipArchiveEntry | undefined> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const done = () => {
        this.zip.off("entry", onEntry);
        this.zip.off("end", onEnd);
        this.zip.off("error", onError);
      };
      const onEntry = (entry: Entry) => {
        done();
        const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
        resolve({
          name,
          unsafeName: yauzl.validateFileName(name) ?? undefined,
          declaredSize: entry.uncompressedSize,
          encrypted: entry.isEncrypted(),
          directory: name.endsWith("/"),
          entry,
        });
      };
      const onEnd = () => {
        done();
        resolve(undefined);
      };
      const onError = (error: Error) => {
        done();
        reject(error);
      };
      this.zip.on("entry", onEntry);
      this.zip.on("end", onEnd);
      this.zip.on("error", onError);
      this.zip.readEntry();
    });
  }

  /**
   * A stream of the entry's uncompressed bytes (stored or deflated). yauzl checks that the bytes
   * match the declared size and fails the stream if they do not.
   */
  async openStream(entry: ZipArchiveEntry): Promise<Readable> {
    const stream = await this.zip.openReadStreamPromise(entry.entry);
    // Errors after the reader gave up on the stream (destroyed it) must not go unhandled.
    stream.on("error", () => {});
    return stream;
  }

  /** Releases the file; entries not yet read are abandoned. Safe to call twice. */
  close(): void {
    this.zip.close();
  }
}
