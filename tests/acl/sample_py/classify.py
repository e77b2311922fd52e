"""An inference program written against pyACL (`import acl`), with the life cycle of Ascend's Python samples:
init, device, context, stream, load, describe, copy in, execute, copy out, release. It knows nothing of npukit.

usage: python3 classify.py MODEL.om INPUT.npy OUTPUT.npy
"""
import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_SUCCESS = 0
NPY_TYPES = {0: np.float32, 1: np.float16, 2: np.int8, 3: np.int32, 4: np.uint8, 9: np.int64}  # aclDataType -> numpy


def check(what, ret):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed: {ret} ({acl.get_recent_err_msg()})")


def main(model_path, input_path, output_path):
    check("acl.init", acl.init())
    check("acl.rt.set_device", acl.rt.set_device(0))
    context, ret = acl.rt.create_context(0)
    check("acl.rt.create_context", ret)
    stream, ret = acl.rt.create_stream()
    check("acl.rt.create_stream", ret)
    model_id, ret = acl.mdl.load_from_file(model_path)
    check("acl.mdl.load_from_file", ret)
    desc = acl.mdl.create_desc()
    check("acl.mdl.get_desc", acl.mdl.get_desc(desc, model_id))

    x = np.ascontiguousarray(np.load(input_path))
    size = acl.mdl.get_input_size_by_index(desc, 0)
    assert x.nbytes == size, (x.nbytes, size)
    dev_in, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
    check("acl.rt.malloc", ret)
    check("acl.rt.memcpy", acl.rt.memcpy(dev_in, size, acl.util.numpy_to_ptr(x), size, ACL_MEMCPY_HOST_TO_DEVICE))
    inputs = acl.mdl.create_dataset()
    in_buffer = acl.create_data_buffer(dev_in, size)
    _, ret = acl.mdl.add_dataset_buffer(inputs, in_buffer)
    check("acl.mdl.add_dataset_buffer", ret)

    outputs = acl.mdl.create_dataset()
    out_size = acl.mdl.get_output_size_by_index(desc, 0)
    dev_out, ret = acl.rt.malloc(out_size, ACL_MEM_MALLOC_HUGE_FIRST)
    check("acl.rt.malloc", ret)
    out_buffer = acl.create_data_buffer(dev_out, out_size)
    _, ret = acl.mdl.add_dataset_buffer(outputs, out_buffer)
    check("acl.mdl.add_dataset_buffer", ret)

    check("acl.mdl.execute", acl.mdl.execute(model_id, inputs, outputs))

    host, ret = acl.rt.malloc_host(out_size)
    check("acl.rt.malloc_host", ret)
    check("acl.rt.memcpy", acl.rt.memcpy(host, out_size, dev_out, out_size, ACL_MEMCPY_DEVICE_TO_HOST))
    dims, ret = acl.mdl.get_cur_output_dims(desc, 0)
    check("acl.mdl.get_cur_output_dims", ret)
    dtype = NPY_TYPES[acl.mdl.get_output_data_type(desc, 0)]
    y = acl.util.ptr_to_numpy(host, tuple(dims["dims"]), np.dtype(dtype).num).copy()
    np.save(output_path, y)
    print("output", dims["name"], dims["dimCount"], dims["dims"], "top class", int(y.argmax()))
    print("top5", " ".join(str(int(c)) for c in np.argsort(-y.astype(np.float32).ravel(), kind="stable")[:5]))

    check("acl.rt.free_host", acl.rt.free_host(host))
    for buffer in (in_buffer, out_buffer):
        check("acl.destroy_data_buffer", acl.destroy_data_buffer(buffer))
    for dataset in (inputs, outputs):
        check("acl.mdl.destroy_dataset", acl.mdl.destroy_dataset(dataset))
    for dev in (dev_in, dev_out):
        check("acl.rt.free", acl.rt.free(dev))
    check("acl.mdl.destroy_desc", acl.mdl.destroy_desc(desc))
    check("acl.mdl.unload", acl.mdl.unload(model_id))
    check("acl.rt.destroy_stream", acl.rt.destroy_stream(stream))
    check("acl.rt.destroy_context", acl.rt.destroy_context(context))
    check("acl.rt.reset_device", acl.rt.reset_device(0))
    check("acl.finalize", acl.finalize())


if __name__ == "__main__":
    main(*sys.argv[1:4])
