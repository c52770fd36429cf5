/** An upload not finished within a day of its start is abandoned (the registry host and `registry gc` expire it). */
export const UPLOAD_LIFETIME_MS = 24 * 3600 * 1000;
