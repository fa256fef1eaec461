/**
 * The web page's rules for search results and playback, without a browser: which results are weak
 * matches, the status line a search ends with (one line, saying so when nothing is likely), and
 * what the player plays for a video (its playback_url, or why nothing plays).
 */
import { describe, expect, it } from 'vitest';
// Plain browser modules (web/): their pure functions run in Node too.
import { isWeak, searchSummary } from '../../web/results.js';
import { playbackChoice } from '../../web/player.js';

describe('weak matches and the status line', () => {
  it('counts a low confidence label as weak, medium and high as likely', () => {
    expect(isWeak({ confidence_label: 'low' })).toBe(true);
    expect(isWeak({ confidence_label: 'medium' })).toBe(false);
    expect(isWeak({ confidence_label: 'high' })).toBe(false);
  });

  it('says how many are likely and how many weaker', () => {
    expect(searchSummary({ likely: 3, weak: 9, label: '“a dog”' })).toBe('12 results for “a dog”. 3 likely, 9 weaker.');
    expect(searchSummary({ likely: 1, weak: 0, label: '“to consider” said' })).toBe('1 result for “to consider” said.');
    expect(searchSummary({ likely: 0, weak: 0, label: '“nothing”' })).toBe('0 results for “nothing”.');
  });

  it('says in the same one line when nothing is likely, warnings after it', () => {
    const line = searchSummary({ likely: 0, weak: 4, label: 'the picture a.jpg', warnings: ['2 videos are still processing.'] });
    expect(line).toBe('4 results for the picture a.jpg. Nothing likely: only weaker matches. 2 videos are still processing.');
    expect(line).not.toContain('\n');
  });
});

describe('what the player plays', () => {
  const v = { video_id: 'vid_1', filename: 'card.avi', status: 'processed' };
  it('plays playback_url when the API gives one', () => {
    expect(playbackChoice({ ...v, playback: 'proxy', playback_url: '/videos/vid_1/playback' })).toEqual({ url: '/videos/vid_1/playback' });
    expect(playbackChoice({ ...v, playback: 'original', playback_url: '/videos/vid_1/file' })).toEqual({ url: '/videos/vid_1/file' });
  });

  it('says why nothing plays instead of loading a dead player', () => {
    expect(playbackChoice({ ...v, playback: 'none' }).error).toMatch(/^card\.avi cannot be played in a browser/);
    expect(playbackChoice({ ...v, status: 'processing' }).error).toMatch(/still being processed/);
    expect(playbackChoice({ ...v, status: 'failed' }).error).toMatch(/processing failed/);
  });

  it('plays the original file from a server that gives no playback fields', () => {
    expect(playbackChoice(v)).toEqual({ url: '/videos/vid_1/file' });
  });
});
