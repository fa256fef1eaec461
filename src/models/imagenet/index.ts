/**
 * ImageNet-1k keyframe classifier (kind "classifier" in models/imagenet-mobilenet-v2.json): a TFLite
 * model converted to ONNX on first use and run on onnxruntime-node. Not an embedder: it is never
 * registered in src/embedders/registry.ts.
 *
 *   const clf = await ImagenetClassifier.open();   // null until `vidembed models pull imagenet-mobilenet-v2`
 *   const top5 = await clf?.classify(frame, 5);     // [{ index, label, synonyms, p }, …]
 */
export {
  CONVERTER_VERSION,
  convertedPath,
  findImagenetModel,
  IMAGENET_MODEL_ID,
  ImagenetClassifier,
  imagenetModelDir,
  isImagenetInstalled,
  parseLabels,
  type ClassScore,
  type ImagenetClassifierOptions,
  type ImagenetFiles,
  type Label,
} from './classifier.js';
export { tfliteToOnnx, type ConvertedModel, type ConvertOptions } from './convert.js';
export { readTflite, type TfliteModel } from './tflite.js';
