import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ImageArchitecturesSchema, ImageSizeSchema, ImagesService } from "../../../gen/platform/registry/v2/images_service_pb.js";
import { Violations } from "../../api/validation.js";
import { imageArchitectures, imageSizeOf } from "./images.js";
import type { ServiceDeps } from "../deps.js";
import { ARCHITECTURE, DIGEST } from "./registry-validation.js";

/** ImagesService: read-only facts of a repo's stored manifests. Authorization ran in the interceptors. */
export function createImagesService({ db }: ServiceDeps): ServiceImpl<typeof ImagesService> {
  const check = (req: { repoUid: string; digest: string }) =>
    new Violations().uid("repo_uid", req.repoUid).text("digest", req.digest, { required: true, max: 71, pattern: DIGEST });

  return {
    async getImageArchitectures(req) {
      check(req).throwIfAny();
      return create(ImageArchitecturesSchema, { architectures: await imageArchitectures(db, req.repoUid, req.digest) });
    },

    async getImageSize(req) {
      check(req).text("architecture", req.architecture, { max: 32, pattern: ARCHITECTURE }).throwIfAny();
      const image = await imageSizeOf(db, req.repoUid, req.digest, req.architecture);
      return create(ImageSizeSchema, { size: BigInt(image.size), architecture: image.architecture, digest: image.digest });
    },
  };
}
