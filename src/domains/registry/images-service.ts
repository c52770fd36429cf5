import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ImageArchitecturesSchema, ImageSizeSchema, ImagesService } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { imageArchitectures, imageSizeOf } from "./images.js";
import type { ServiceDeps } from "../kit/deps.js";
import { ARCHITECTURE, checkImageRef } from "./image-validation.js";
import { vulnerabilityReportFromView } from "./vulnerability-report-mapper.js";
import { vulnerabilityReportOf } from "./vulnerability-reports.js";

/** ImagesService: read-only facts of a repo's stored manifests. Authorization ran in the interceptors. */
export function createImagesService({ db }: ServiceDeps): ServiceImpl<typeof ImagesService> {
  return {
    async getImageArchitectures(req) {
      checkImageRef(req).throwIfAny();
      return create(ImageArchitecturesSchema, { architectures: await imageArchitectures(db, req.repoUid, req.digest) });
    },

    async getImageSize(req) {
      checkImageRef(req).text("architecture", req.architecture, { max: 32, pattern: ARCHITECTURE }).throwIfAny();
      const image = await imageSizeOf(db, req.repoUid, req.digest, req.architecture);
      return create(ImageSizeSchema, { size: BigInt(image.size), architecture: image.architecture, digest: image.digest });
    },

    async getVulnerabilityReport(req) {
      checkImageRef(req).throwIfAny();
      return vulnerabilityReportFromView(await vulnerabilityReportOf(db, req.repoUid, req.digest));
    },
  };
}
