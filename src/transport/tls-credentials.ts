import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import tls from "node:tls";

/** A certificate chain and its private key, PEM. */
export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

/** Where `serve --tls-cert` / `--tls-key` point. */
export interface TlsFiles {
  certPath: string;
  keyPath: string;
}

/** A file or its content that cannot serve TLS. Its message names the file and why, in one line. */
export class TlsCredentialsError extends Error {}

/**
 * Reads the certificate chain and key and checks they make a usable TLS context (PEM that
 * parses, a key that matches the certificate). Throws TlsCredentialsError otherwise.
 */
export async function readTlsCredentials(files: TlsFiles): Promise<TlsCredentials> {
  const read = (path: string, what: string) =>
    readFile(path).catch((error: NodeJS.ErrnoException) => {
      throw new TlsCredentialsError(`${what} ${path}: ${error.code === "ENOENT" ? "no such file" : error.code === "EACCES" ? "permission denied" : error.message}`);
    });
  const [cert, key] = await Promise.all([read(files.certPath, "--tls-cert"), read(files.keyPath, "--tls-key")]);
  try {
    new X509Certificate(cert);
  } catch {
    throw new TlsCredentialsError(`--tls-cert ${files.certPath}: not a PEM certificate`);
  }
  try {
    tls.createSecureContext({ cert, key });
  } catch (error) {
    const reason = /key values mismatch/i.test((error as Error).message) ? "does not match the certificate" : "not a PEM private key";
    throw new TlsCredentialsError(`--tls-key ${files.keyPath}: ${reason}`);
  }
  return { cert, key };
}

/** The leaf certificate's subject and expiry, for logs. */
export function describeCertificate(credentials: TlsCredentials): { subject: string; notAfter: string; fingerprint256: string } {
  const leaf = new X509Certificate(credentials.cert);
  return { subject: leaf.subject.replace(/\n/g, ", "), notAfter: new Date(leaf.validTo).toISOString(), fingerprint256: leaf.fingerprint256 };
}
