/**
 * The search operation's schema (part of `schemas`, src/api/schemas.ts): the query (text, what is
 * said, a picture, a stored moment, tag filters) and the hits with their evidence by kind.
 */
import { LIMITS } from './defaults.js';
import { FILTER_NAMES } from '../tags/registry.js';
import { HTTP_URL_PATTERN, num, present, segment, str, tagFilters } from './schema-parts.js';

/** One kind of evidence of a search hit (seen, said, written). */
const kindEvidence = {
  type: 'object',
  required: ['probability'],
  additionalProperties: false,
  properties: {
    probability: { type: 'number', minimum: 0, maximum: 1, description: 'this kind alone: the probability that the moment is what the query asks for' },
    matched: { type: 'array', items: { type: 'string' }, description: 'the query words this kind holds (as seen, heard or read)' },
    snippet: { type: 'string', description: 'what matched, as a person reads it: the facts that name the words, the words said around the match (matched ones between asterisks), the text on screen' },
    parts: { type: 'object', additionalProperties: { type: 'number' }, description: 'with explain: the raw numbers this kind\'s curve read (similarity, sure word share, alignment score…)' },
  },
} as const;

export const searchSchemas = {
  search: {
    params: { type: 'object', required: ['collection_id'], properties: { collection_id: str } },
    body: {
      type: 'object',
      description:
        'text, a picture (image_base64 or image_url, not both), a moment (like), or a mix: each given part counts the same; text also matches what is said and written in the videos, each kind of evidence with its own probability (docs/api.md, "Evidence"); `said` alone searches the transcripts only, `seen` the pictures only',
      anyOf: [{ required: ['text'] }, { required: ['said'] }, { required: ['seen'] }, { required: ['image_base64'] }, { required: ['image_url'] }, { required: ['like'] }],
      // One picture: image_base64 or image_url, not both.
      not: present(['image_base64', 'image_url']),
      // `said` searches the transcripts alone: not with text, seen words, a picture or a moment;
      // `seen` words are the text of a picture-only search: not with text.
      allOf: [
        { if: present(['said']), then: { not: { anyOf: [present(['text']), present(['seen']), present(['image_base64']), present(['image_url']), present(['like'])] } } },
        { if: present(['seen']), then: { not: present(['text']) } },
      ],
      properties: {
        text: { type: 'string', minLength: 1, pattern: '\\S', description: 'not only white space' },
        said: { type: 'string', minLength: 1, maxLength: 1000, pattern: '\\S', description: 'not only white space: words that were said: the transcripts only, matched exactly and by sound; results carry `said`' },
        seen: { type: 'string', minLength: 1, pattern: '\\S', description: 'not only white space: words for what is seen: the pictures alone (their facts and embedding), never what is said or written; alone or with a picture or a moment' },
        image_base64: { type: 'string', minLength: 1, pattern: '\\S', contentEncoding: 'base64', description: 'a picture as the query (JPEG, PNG, WebP…), at most 32 MiB, base64-encoded (bytes that are not base64 are a 400)' },
        image_url: { type: 'string', minLength: 1, pattern: HTTP_URL_PATTERN, description: 'a picture fetched from a public http(s) URL (the same rules and guard as video_url)' },
        like: {
          type: 'object',
          required: ['video_id'],
          additionalProperties: false,
          description: 'a moment as the query: the segment at t, or the whole video without t; that video is left out of the results',
          properties: { video_id: { type: 'string', minLength: 1 }, t: { type: 'number', minimum: 0 } },
        },
        top_k: { type: 'integer', minimum: LIMITS.topK.min, maximum: LIMITS.topK.max, default: LIMITS.topK.default },
        offset: { type: 'integer', minimum: 0, maximum: LIMITS.maxSearchHits - 1, default: 0, description: `results to skip (pages); offset + top_k <= ${LIMITS.maxSearchHits} (a 422 otherwise)` },
        ...tagFilters,
        min_confidence: { type: 'number', minimum: 0, maximum: 1, description: 'leave out results whose confidence is below this' },
        explain: { type: 'boolean' },
      },
    },
    response: {
      type: 'object',
      required: ['results', 'model'],
      additionalProperties: true,
      properties: {
        model: str,
        offset: { type: 'integer', minimum: 0, description: 'where this page starts, when not 0' },
        next_offset: { type: 'integer', minimum: 1, description: 'the offset of the next page, when more results may follow' },
        truncated: { type: 'boolean', description: 'the query was cut to what the model reads' },
        warnings: { type: 'array', items: str, description: 'weak matches, a script the model does not read, videos still processing' },
        results: {
          type: 'array',
          items: {
            type: 'object',
            required: ['video_id', 'similarity', 'relevance', 'confidence', 'confidence_label', 'start', 'end', 'filename', 'kinds', 'evidence'],
            // Results may grow fields (thumbnail_url): clients ignore what they do not know.
            additionalProperties: true,
            properties: {
              video_id: str,
              similarity: { type: 'number', description: 'cosine similarity of the best segment' },
              relevance: { type: 'number', minimum: 0, maximum: 1, description: 'what results are ordered by, 0–1: the probability the ranking reads (docs/api.md, "Evidence")' },
              confidence: { type: 'number', minimum: 0, maximum: 1, description: 'the probability that this moment is what the query asks for: the kinds of evidence combined' },
              confidence_label: { type: 'string', enum: ['high', 'medium', 'low'] },
              start: num,
              end: num,
              filename: str,
              description: str,
              matched_words: { type: 'array', items: str },
              confidence_reason: { type: 'string', description: 'with explain: what drove the confidence (similarity, the query words analysis saw and how sure it was of each)' },
              kinds: {
                type: 'array',
                items: { type: 'string', enum: ['seen', 'said', 'written'] },
                description: 'which kinds of evidence matched: seen (the picture: its facts and its embedding), said (the transcript), written (text on screen)',
              },
              evidence: {
                type: 'object',
                description: 'per kind that matched: its own probability that this moment is what the query asks for, the words that matched and a snippet; with explain, the raw parts its curve read',
                propertyNames: { enum: ['seen', 'said', 'written'] },
                additionalProperties: kindEvidence,
              },
              thumbnail_url: { type: 'string', description: 'API path of the matching moment\'s keyframe' },
              tags: {
                type: 'object',
                description: `the moment's filterable tags: ${FILTER_NAMES.join(', ')} (those measured)`,
                propertyNames: { enum: [...FILTER_NAMES] as string[] },
                additionalProperties: { type: 'object', required: ['label', 'confidence'], properties: { label: str, confidence: { type: 'number', minimum: 0, maximum: 1 } } },
              },
              said: {
                type: 'object',
                description: 'present when the result was found by what is said: the words around the match (matched ones between asterisks), the matched words, when they are said, and how well their sounds match (1: exactly)',
                required: ['text', 'matched', 'start', 'end', 'score'],
                properties: { text: str, matched: { type: 'array', items: str }, start: num, end: num, score: { type: 'number', minimum: 0, maximum: 1 } },
              },
            },
          },
        },
      },
    },
    examples: {
      text: { summary: 'the 5 best matches', value: { text: 'sunset over the sea', top_k: 5 } },
      said: { summary: 'where somebody says it (transcripts only)', value: { said: 'quarterly revenue', top_k: 5 } },
      filtered: { summary: 'only wide shots panning left, with what the engine saw', value: { text: 'a crowd in a square', shot_size: 'wide', camera_movement: 'pan_left', explain: true } },
    },
  },
} as const;
