/**
 * The JSON body of a tensor upload, read without holding the event loop (issue 21: /healthz stays
 * fast while 320 MiB tensors arrive). The framework's parser would join the ~427 MB body into one
 * buffer here and parse it to a 427 MB string; this one streams the chunks to the body thread,
 * which parses the body and decodes each tensor's `data` (src/threads/body-thread.ts
 * `TensorBodyReader`). The route gets the body with `data` as '' and the bytes beside it
 * (src/threads/body-thread.ts `decodedTensorData`), validated by the same schema, then checked by `storeTensorUpload` in the
 * same order and with the same errors as a body with its base64 in place.
 *
 * The limits are the framework's own (its rawBody): a declared length over the route's bodyLimit
 * or more bytes than it received is a 413, a length that does not match the bytes a 400.
 */
import { errorCodes, type FastifyInstance } from 'fastify';
import { TensorBodyReader } from '../threads/body-thread.js';

/** Replaces the JSON parser of `app` (an encapsulated plugin: its routes only) with the streaming one. */
export function useTensorBodyParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const limit = request.routeOptions.bodyLimit;
    const contentLength = Number(request.headers['content-length']);
    if (contentLength > limit) return void done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE(), undefined);
    const reader = new TensorBodyReader(Number.isNaN(contentLength) ? 0 : contentLength);
    const stream = payload as typeof payload & { receivedEncodedLength?: number };
    let received = 0;
    const stop = () => {
      stream.removeListener('data', onData);
      stream.removeListener('end', onEnd);
      stream.removeListener('error', onEnd);
      stream.removeListener('close', onClose);
    };
    const fail = (err: Error) => {
      stop();
      reader.abort();
      done(err, undefined);
    };
    function onData(chunk: Buffer | string) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += buf.length;
      if (received > limit || (stream.receivedEncodedLength ?? 0) > limit) return fail(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      reader.push(buf);
    }
    function onEnd(err?: Error & { statusCode?: number }) {
      if (err != null) {
        if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
        return fail(err);
      }
      if (!Number.isNaN(contentLength) && (stream.receivedEncodedLength || received) !== contentLength) return fail(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      stop();
      reader.end().then(
        (value) => done(null, value),
        (e: Error) => done(e, undefined),
      );
    }
    // The client went away mid-body: the thread forgets the chunks it holds.
    function onClose() {
      stop();
      reader.abort();
    }
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onEnd);
    stream.on('close', onClose);
    stream.resume();
  });
}
