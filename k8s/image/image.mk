# Container image targets (buildah; see Dockerfile), with their scripts
# beside this file (build.sh, test.sh). Included from the Makefile:
#   include k8s/image/image.mk
#   make image        local Debian 12 base images (debootstrap, cached under
#                     $(BUILD)/image) if missing, then buildah bud -> $(IMAGE)
#   make image-test   runs $(IMAGE) and checks it (HTTP, uid, contents, size)
# Both need root. IMAGE, IMAGE_BASE, IMAGE_RUNTIME_BASE may be overridden, e.g.
#   make image IMAGE_BASE=docker.io/library/debian:bookworm \
#              IMAGE_RUNTIME_BASE=docker.io/library/debian:bookworm-slim
# Whatever the default goal was before this file stays the default goal
# (restored at the end), wherever the include line stands.
image_mk_saved_goal := $(.DEFAULT_GOAL)

IMAGE ?= localhost/chessd:latest
IMAGE_BASE ?= localhost/debian:bookworm
IMAGE_RUNTIME_BASE ?= localhost/debian:bookworm-slim
IMAGE_WORK ?= $(BUILD)/image

.PHONY: image image-test

image:
	IMAGE='$(IMAGE)' BASE_IMAGE='$(IMAGE_BASE)' RUNTIME_BASE_IMAGE='$(IMAGE_RUNTIME_BASE)' \
		WORK='$(IMAGE_WORK)' k8s/image/build.sh

image-test:
	IMAGE='$(IMAGE)' k8s/image/test.sh

.DEFAULT_GOAL := $(image_mk_saved_goal)
