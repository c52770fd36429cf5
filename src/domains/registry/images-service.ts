import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ImageArchitecturesSchema, ImageSizeSchema, ImagesService } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { imageArchitectures, imageSizeOf } from "./images.js";
import type { ServiceDeps } from "../kit/deps.js";
import { listMethod } from "../kit/standard-methods.js";
import { getRepo } from "./store/repos.js";
import { imageFromRow } from "./trust/image-mapper.js";
import { checkImageFilter } from "./trust/image-list-validation.js";
import { listImages } from "./trust/store/image-list.js";
import { ARCHITECTURE, checkImageRef } from "./image-validation.js";
import { Violations } from "../../aip/validation.js";
import { vulnerabilityReportFromView } from "./vulnerability-report-mapper.js";
import { vulnerabilityReportOf } from "./vulnerability-reports.js";

/** ImagesService: read-only facts of a repo's stored manifests. Authorization ran in the interceptors. */
export function createImagesService({ db, pager }: ServiceDeps): ServiceImpl<typeof ImagesService> {
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

    listImages: (req, ctx) =>
      listMethod(ctx, pager, ImagesService.method.listImages, req, "images", {
        orderable: {},
        validate: (violations) => void checkImageFilter(violations, req),
        read: async (page) => listImages(db, await getRepo(db, req.repoUid), checkImageFilter(new Violations(), req), page),
        map: (row) => imageFromRow(req.repoUid, row),
      }),

    async getVulnerabilityReport(req) {
      checkImageRef(req).throwIfAny();
      return vulnerabilityReportFromView(await vulnerabilityReportOf(db, req.repoUid, req.digest));
    },
  };
}
