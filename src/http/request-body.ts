import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import { declaresBody, takesBody } from './auth.js';
import { HttpError } from './errors.js';

/** Largest request body read; a larger one is a 413 before it is parsed. */
export const MAX_BODY_BYTES = 1024 * 1024;
const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * Refuses, before anything reads the body: a declared length over the limit (413, answered
 * at once instead of after the upload), and a body that is not JSON (415, rather than
 * ignored and then reported as missing fields). A chunked body over the limit is stopped by
 * the JSON parser once it has read just past the limit.
 */
export function refuseUnreadableBody(req: IncomingMessage): void {
  if (!takesBody(req.method!) || !declaresBody(req.headers)) return;
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > MAX_BODY_BYTES) {
    throw new HttpError(413, 'payload_too_large', `request body is larger than ${MAX_BODY_BYTES / 1024 / 1024} MB`);
  }
  if (!typeis(req, JSON_TYPES)) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      'request body must be JSON: send Content-Type: application/json',
    );
  }
}

/** Express' JSON parser (it sets `req.body`). */
const jsonParser = express.json({ limit: MAX_BODY_BYTES, strict: false, type: JSON_TYPES });

/** `refuseUnreadableBody`, then the JSON body of a method that has one, for Express. */
export const readBody: RequestHandler = (req, res, next) => {
  refuseUnreadableBody(req);
  if (takesBody(req.method)) jsonParser(req, res, next);
  else next();
};
