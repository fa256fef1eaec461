/**
 * The pixel kernels, one implementation each: RGB→luma (Rec. 601, one formula), area resampling,
 * 2× halving and pyramids, box blur, keypoints (FAST + BRIEF) and their geometric match, the least-squares similarity fit, and the numeric helpers the taggers share (median,
 * percentile, rounding, clamp, sigmoid, popcount). Used by tagging/, models/perception/,
 * models/ocr/, media/phash.ts and engine/duplicates.ts.
 */
export { LUMA_WEIGHTS, LUMA_Q8, luma, lumaQ8, lumaByte, frameLuma, frameToGray } from './luma.js';
export { checkFrame, fitSize, resizeGray, halve, pyramid, pyramidScaled, integralImage, boxSum, boxBlur, type GrayImage } from './gray.js';
export { detectKeypoints, KEYPOINT_DEFAULTS, type Keypoints, type KeypointOptions } from './keypoints.js';
export { fitSimilarity, type Similarity, type PointPairs } from './similarity.js';
export { matchPictures, matchDescriptors, MATCH_DEFAULTS, type PictureMatch, type MatchOptions } from './match.js';
export { round, round3, round4, clamp01, sigmoid, median, percentile, popcount32 } from '../../util/numeric.js';
