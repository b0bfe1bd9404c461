"""Lesson 10's suite: the course's steppers as the Python module `grayscott`.

Run by build/bin/test_lesson10_solution (or _exercise), which starts the Python the module was
built for with that variant's module first on its path; CTest runs one class at a time
(`-k TestCorrectness`). The numbers are compared with an oracle written here in NumPy, in
double precision (the problem's definition, docs/PROBLEM.md), and with the module's `reference`
implementation (common/'s scalar reference); grids are odd, states random, outputs poisoned
with NaN where the module writes into arrays of ours. GPU classes skip, saying why, without a
GPU or without CuPy, PyTorch or JAX.
"""

from __future__ import annotations

import ctypes
import gc
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import grayscott

TOLERANCE = 1e-4  # as the C++ suites (tests/support/check.hpp): far above float32 rounding
VARIANT = os.environ.get("GS_LESSON10_VARIANT", "solution")
BUILD = Path(os.environ.get("GS_BUILD_DIR", "build"))
ODD_GRIDS = [(1, 1), (5, 7), (1, 7), (7, 1), (17, 33), (67, 131)]
RATES = {name: float(np.float32(value)) for name, value in grayscott.defaults().items()
         if name in ("feed", "kill", "dt", "du", "dv")}


# ------------------------------------------------------------------------------------------------
# Oracles and checks
# ------------------------------------------------------------------------------------------------


def neighbour_sum(a: np.ndarray) -> np.ndarray:
    """The sum over the in-grid neighbours of each cell (outside the grid counts 0)."""
    p = np.pad(a, 1)
    return (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 2:]
            + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:])


def oracle(u, v, steps, feed=RATES["feed"], kill=RATES["kill"], dt=RATES["dt"],
           du=RATES["du"], dv=RATES["dv"]):
    """docs/PROBLEM.md's equations in float64, written here independently of the module."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    count = neighbour_sum(np.ones_like(u))
    for _ in range(steps):
        uvv = u * v * v
        lu = neighbour_sum(u) - count * u
        lv = neighbour_sum(v) - count * v
        u, v = (u + dt * (du * lu - uvv + feed * (1 - u)),
                v + dt * (dv * lv + uvv - (feed + kill) * v))
    return u, v


def assert_matches(got, expected, what: str, tolerance: float = TOLERANCE) -> None:
    """Every value finite and within tolerance; otherwise name the worst cell."""
    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    nan = int(np.count_nonzero(~np.isfinite(got)))
    error = np.abs(got - expected)
    error[~np.isfinite(error)] = np.inf
    worst = np.unravel_index(int(np.argmax(error)), error.shape)
    off = int(np.count_nonzero(error > tolerance))
    assert off == 0, (
        f"{what}: {off} of {error.size} cells off by more than {tolerance} ({nan} not finite); "
        f"worst at (row {worst[0]}, col {worst[1]}): got {got[worst]}, expected {expected[worst]}"
    )


def random_state(rows, cols, seed=7):
    return grayscott.random_state(rows, cols, seed)


def cpu_names() -> list[str]:
    return [i["name"] for i in grayscott.list_implementations() if i["device"] == "cpu"]


def gpu_names() -> list[str]:
    return [i["name"] for i in grayscott.list_implementations() if i["device"] == "gpu"]


def require_gpu() -> None:
    status = grayscott.gpu_status()
    if not status["available"]:
        pytest.skip(f"no usable GPU: {status['reason']}")
    if not gpu_names():
        pytest.skip("this build has no GPU implementation")


def pitched(u: np.ndarray, extra: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """u in the first columns of a wider array of NaN: rows `cols + extra` floats apart."""
    rows, cols = u.shape
    wide = np.full((rows, cols + extra), np.nan, dtype=np.float32)
    wide[:, :cols] = u
    return wide, wide[:, :cols]


def run_python(code: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)


# ------------------------------------------------------------------------------------------------
# The most telling case first: one step on 5 x 7, through the learner's binding
# ------------------------------------------------------------------------------------------------


class TestFirstCase:
    def test_one_step_5x7_in_place(self):
        u, v = random_state(5, 7)
        expected = oracle(u, v, 1)
        stepper = grayscott.Stepper(5, 7, "reference")
        stepper.advance(u, v, 1)
        assert_matches(u, expected[0], "u after 1 step, 5x7, advanced in place")
        assert_matches(v, expected[1], "v after 1 step, 5x7, advanced in place")

    def test_one_step_5x7_loaded_into_a_simulation(self):
        u, v = random_state(5, 7)
        sim = grayscott.Simulation(5, 7)
        sim.load(u, v)
        sim.advance(1)
        expected = oracle(u, v, 1)
        assert_matches(sim.u, expected[0], f"u after 1 step, 5x7, {sim.implementation}")
        assert_matches(sim.v, expected[1], f"v after 1 step, 5x7, {sim.implementation}")


# ------------------------------------------------------------------------------------------------
# Numbers: every CPU implementation against the oracles
# ------------------------------------------------------------------------------------------------


class TestCorrectness:
    @pytest.mark.parametrize("rows,cols", ODD_GRIDS)
    def test_reference_against_the_equations_in_double(self, rows, cols):
        u, v = random_state(rows, cols, seed=rows * 1000 + cols)
        sim = grayscott.Simulation(rows, cols, "reference")
        sim.load(u, v)
        sim.advance(20)
        expected = oracle(u, v, 20)
        assert_matches(sim.u, expected[0], f"reference u, {rows}x{cols}, 20 steps")
        assert_matches(sim.v, expected[1], f"reference v, {rows}x{cols}, 20 steps")

    @pytest.mark.parametrize("rows,cols", [(5, 7), (67, 131), (1080, 1920)])
    def test_initial_state_is_the_problem(self, rows, cols):
        u, v = grayscott.initial_state(rows, cols)
        expected_v = np.zeros((rows, cols), dtype=np.float32)
        expected_v[max(0, 7 * rows // 16 - 4):max(0, 8 * rows // 16 - 4),
                   7 * cols // 16:8 * cols // 16] = 1
        assert u.dtype == np.float32 and v.shape == (rows, cols)
        assert np.array_equal(v, expected_v) and np.array_equal(u, 1 - expected_v)

    @pytest.mark.parametrize("name", cpu_names())
    def test_own_state_from_the_initial_condition(self, name):
        rows, cols = 67, 131
        sim = grayscott.Simulation(rows, cols, name)
        for steps in (1, 7, 30):  # calls of several sizes: 38 steps
            sim.advance(steps)
        assert sim.steps == 38
        expected = oracle(*grayscott.initial_state(rows, cols), 38)
        u, v = sim.fetch()
        assert_matches(u, expected[0], f"{name} u, {rows}x{cols}, 38 steps")
        assert_matches(v, expected[1], f"{name} v, {rows}x{cols}, 38 steps")

    @pytest.mark.parametrize("name", cpu_names())
    @pytest.mark.parametrize("rows,cols", ODD_GRIDS)
    def test_caller_arrays_in_place(self, name, rows, cols):
        u, v = random_state(rows, cols, seed=rows + cols)
        expected = oracle(u, v, 11)
        stepper = grayscott.Stepper(rows, cols, name)
        returned = stepper.advance(u, v, 4)
        assert returned[0] is u and returned[1] is v
        stepper.advance(u, v, 7)
        assert_matches(u, expected[0], f"{name} u in place, {rows}x{cols}, 11 steps")
        assert_matches(v, expected[1], f"{name} v in place, {rows}x{cols}, 11 steps")

    @pytest.mark.parametrize("name", ["reference", cpu_names()[0]])
    def test_pitched_rows_in_place_leave_the_padding_alone(self, name):
        u0, v0 = random_state(17, 33)
        wide_u, u = pitched(u0)
        wide_v, v = pitched(v0)
        grayscott.Stepper(17, 33, name).advance(u, v, 9)
        expected = oracle(u0, v0, 9)
        assert_matches(u, expected[0], f"{name} u, rows 38 floats apart")
        assert_matches(v, expected[1], f"{name} v, rows 38 floats apart")
        assert np.isnan(wide_u[:, 33:]).all() and np.isnan(wide_v[:, 33:]).all(), (
            "the padding between the rows was written")

    def test_advanced_returns_new_arrays_and_leaves_the_input(self):
        u, v = random_state(17, 33)
        before = (u.copy(), v.copy())
        u.flags.writeable = False  # only read: a read-only input is fine
        new_u, new_v = grayscott.Stepper(17, 33, "reference").advanced(u, v, 5)
        expected = oracle(before[0], before[1], 5)
        assert isinstance(new_u, np.ndarray) and new_u.dtype == np.float32
        assert_matches(new_u, expected[0], "advanced() u")
        assert_matches(new_v, expected[1], "advanced() v")
        assert np.array_equal(u, before[0]) and np.array_equal(v, before[1])

    def test_loaded_state_overrides_and_reload_restarts(self):
        u, v = random_state(17, 33)
        sim = grayscott.Simulation(17, 33, "reference")
        sim.load(u, v)
        sim.advance(6)
        sim.load()  # back to the initial condition
        assert sim.steps == 0
        start = grayscott.initial_state(17, 33)
        assert np.array_equal(sim.u, start[0]) and np.array_equal(sim.v, start[1])

    def test_split_calls_equal_one_call(self):
        u, v = random_state(67, 131)
        whole = grayscott.Simulation(67, 131)
        whole.load(u, v)
        whole.advance(40)
        split = grayscott.Simulation(67, 131)
        split.load(u, v)
        for steps in (1, 2, 3, 34):
            split.advance(steps)
        assert_matches(split.v, whole.v, "40 steps in four calls against one", TOLERANCE / 10)

    def test_load_copies_what_it_needs(self):
        u, v = random_state(17, 33)
        sim = grayscott.Simulation(17, 33, "reference")
        sim.load(u, v)
        u[:] = np.nan  # the caller's arrays change after load(): the simulation has its copy
        sim.advance(3)
        assert np.isfinite(sim.u).all()


# ------------------------------------------------------------------------------------------------
# DLPack on the CPU: the caller's arrays read where they lie (the learner's from_dlpack.hpp)
# ------------------------------------------------------------------------------------------------


class DLPackOnly:
    """A NumPy array seen only through DLPack (NumPy's own __dlpack__ and __dlpack_device__), as
    a PyTorch CPU tensor is: not an ndarray, so the module cannot take NumPy's buffer instead.
    Records the stream of each __dlpack__ call; NumPy refuses any but None, as DLPack says of a
    CPU array."""

    def __init__(self, array):
        self.array = array
        self.streams = []

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return self.array.__dlpack__() if stream is None else self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):  # dlpack.h's DLManagedTensor, as in DLPack 0.6 to 1.x
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandMadeDLPack:
    """A DLPack producer written here with ctypes, over memory a NumPy array owns, that says what
    NumPy never does: a byte offset, no strides (DLPack's compact row-major), strides of our
    choosing, another device type, bfloat16 or vector lanes, no shape, a used capsule. Its capsule
    has no destructor and its tensor no deleter: this object keeps both alive. Records the stream
    of each __dlpack__ call."""

    def __init__(self, memory, shape, strides=None, byte_offset=0, dtype=(2, 32, 1),
                 device=(1, 0), capsule_name=b"dltensor", ndim=None):
        self.memory = memory
        self.device = device
        self.capsule_name = capsule_name
        self.streams = []
        self._managed = _DLManagedTensor()
        tensor = self._managed.dl_tensor
        tensor.data = memory.ctypes.data
        tensor.device = _DLDevice(*device)
        tensor.ndim = len(shape) if ndim is None else ndim
        tensor.dtype = _DLDataType(*dtype)
        if shape is not None:
            self._shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
            tensor.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        if strides is not None:
            self._strides = (ctypes.c_int64 * len(strides))(*strides)
            tensor.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        tensor.byte_offset = byte_offset

    def __dlpack__(self, stream=None, **kwargs):
        self.streams.append(stream)
        return _capsule_new(ctypes.addressof(self._managed), self.capsule_name, None)

    def __dlpack_device__(self):
        return self.device


def require_dlpack() -> None:
    if not grayscott.build["dlpack"]:
        pytest.skip("this module was built without dlpack.h: no DLPack path to grade")


def without_zero_copy(u, v, steps, name):
    """The same implementation's numbers for (u, v), on its own copy of them (Simulation.load)."""
    sim = grayscott.Simulation(*u.shape, name)
    sim.load(u, v)
    sim.advance(steps)
    return sim.fetch()


class TestDLPack:
    def stepper(self, rows=17, cols=33):
        return grayscott.Stepper(rows, cols, "reference")

    @pytest.mark.parametrize("name", sorted({"reference", cpu_names()[0]}))
    @pytest.mark.parametrize("rows,cols", ODD_GRIDS)
    def test_numpy_arrays_through_dlpack_in_place(self, name, rows, cols):
        require_dlpack()
        u, v = random_state(rows, cols, seed=3 * rows + cols)
        expected = oracle(u, v, 9)
        copied = without_zero_copy(u, v, 9, name)
        held_u, held_v = DLPackOnly(u), DLPackOnly(v)
        returned = grayscott.Stepper(rows, cols, name).advance(held_u, held_v, 9)
        assert returned[0] is held_u and returned[1] is held_v
        assert held_u.streams == [None] and held_v.streams == [None], (
            f"a CPU array is asked for with no stream: got {held_u.streams}, {held_v.streams}")
        assert_matches(u, expected[0], f"{name} u through DLPack, {rows}x{cols}, 9 steps")
        assert_matches(v, expected[1], f"{name} v through DLPack, {rows}x{cols}, 9 steps")
        assert np.array_equal(u, copied[0]) and np.array_equal(v, copied[1]), (
            f"{name}: the caller's arrays advanced through DLPack differ from the same steps on "
            "the module's own copy")

    def test_dlpack_host_arrays_in_place(self):
        require_dlpack()
        u, v = random_state(17, 33)
        expected = oracle(u, v, 5)
        self.stepper().advance(DLPackOnly(u), DLPackOnly(v), 5)
        assert_matches(u, expected[0], "u in place through DLPack")
        assert_matches(v, expected[1], "v in place through DLPack")

    def test_no_copy_the_module_writes_the_callers_memory(self):
        require_dlpack()
        u, v = random_state(17, 33, seed=23)
        address, row = u.ctypes.data, u[4]  # a view of the caller's row 4
        before = row.copy()
        grayscott.reset_transfer_counters()
        self.stepper().advance(DLPackOnly(u), DLPackOnly(v), 3)
        through_dlpack = grayscott.transfer_counters()
        assert u.ctypes.data == address
        assert not np.array_equal(row, before), "the caller's memory was not written"
        same_u, same_v = random_state(17, 33, seed=23)
        grayscott.reset_transfer_counters()
        self.stepper().advance(same_u, same_v, 3)  # NumPy's buffer: the lesson's zero-copy
        assert through_dlpack == grayscott.transfer_counters(), (
            "DLPack made copies that NumPy's buffer does not")
        assert np.array_equal(u, same_u) and np.array_equal(v, same_v)

    def test_the_steps_see_the_callers_memory_not_a_copy(self):
        # The lesson's point: the stepper works on the caller's memory itself, not on a copy of
        # it. A copy that is written back at the end of the call (copy-in/copy-out) gives the
        # right numbers in the caller's arrays and passes the suite's other CPU tests (the
        # fixture tests/fixtures/10_python/copies_in_and_out/, CTest
        # lesson10.point_fixture.copies_in_and_out); it is caught by a write of the caller's
        # between from_dlpack()'s read and the steps: the caller writes a
        # new state into the field the module read first while the module asks for the other's
        # capsule (a producer's __dlpack__ is the caller's code). The memory is the caller's, so
        # the steps must start from that new state.
        require_dlpack()
        u0, v0 = random_state(17, 33, seed=29)
        late_u, late_v = random_state(17, 33, seed=31)
        asked = []

        class WritesTheOther(DLPackOnly):
            def __init__(self, array, late):
                super().__init__(array)
                self.late = late

            def __dlpack__(self, stream=None, **kwargs):
                capsule = super().__dlpack__(stream, **kwargs)
                if asked and self not in asked:  # the first field is read: write into it
                    asked[0].array[...] = asked[0].late
                if self not in asked:
                    asked.append(self)
                return capsule

        u, v = u0.copy(), v0.copy()
        held_u, held_v = WritesTheOther(u, late_u), WritesTheOther(v, late_v)
        address = (u.ctypes.data, v.ctypes.data)
        self.stepper().advance(held_u, held_v, 5)
        assert len(asked) == 2, "both fields come through DLPack: each one's capsule is asked for"
        assert (u.ctypes.data, v.ctypes.data) == address
        first = "u" if asked[0] is held_u else "v"
        start = (late_u, v0) if first == "u" else (u0, late_v)
        expected = oracle(*start, 5)
        stale = oracle(u0, v0, 5)
        got = (u, v)
        off_stale = max(float(np.max(np.abs(g - s))) for g, s in zip(got, stale))
        assert off_stale > TOLERANCE, (
            f"the steps ran on a copy of {first} that from_dlpack() took before the caller "
            f"wrote its memory (written while the module asked for the other field's capsule, "
            f"before the steps): the result is the old {first}'s, 5 steps on; the stepper must "
            f"work on the caller's memory itself, its pointer and strides (no copy)")
        assert_matches(u, expected[0], f"u, 5 steps from the state the caller wrote into {first}")
        assert_matches(v, expected[1], f"v, 5 steps from the state the caller wrote into {first}")

    def test_rows_apart_leave_the_poisoned_padding_alone(self):
        require_dlpack()
        u0, v0 = random_state(17, 33, seed=11)
        wide_u, u = pitched(u0)
        wide_v, v = pitched(v0)
        self.stepper().advance(DLPackOnly(u), DLPackOnly(v), 6)
        expected = oracle(u0, v0, 6)
        assert_matches(u, expected[0], "u through DLPack, rows 38 floats apart")
        assert_matches(v, expected[1], "v through DLPack, rows 38 floats apart")
        assert np.isnan(wide_u[:, 33:]).all() and np.isnan(wide_v[:, 33:]).all(), (
            "the padding between the rows was written")

    @pytest.mark.parametrize("rows,cols", [(1, 7), (7, 1), (17, 33)])
    def test_byte_offset_and_implicit_strides(self, rows, cols):
        # The first cell 3 floats past the data pointer, no strides: exactly the cells described
        # are advanced, in the caller's memory; the NaN around them stays.
        require_dlpack()
        u0, v0 = random_state(rows, cols, seed=5)
        cells, before = rows * cols, 3
        memories, producers = [], []
        for field in (u0, v0):
            memory = np.full(before + cells + 4, np.nan, dtype=np.float32)
            memory[before:before + cells] = field.ravel()
            memories.append(memory)
            producers.append(HandMadeDLPack(memory, (rows, cols), byte_offset=4 * before))
        self.stepper(rows, cols).advance(*producers, 4)
        expected = oracle(u0, v0, 4)
        for memory, want, what in zip(memories, expected, "uv"):
            assert_matches(memory[before:before + cells].reshape(rows, cols), want,
                           f"{what}, {rows}x{cols}, 12 bytes past the data pointer, no strides")
            assert np.isnan(memory[:before]).all() and np.isnan(memory[before + cells:]).all(), (
                f"{what}: memory outside the tensor was written")

    def test_strides_are_in_elements(self):
        require_dlpack()
        u0, v0 = random_state(17, 33, seed=13)
        memories = [np.full((17, 40), np.nan, dtype=np.float32) for _ in range(2)]
        for memory, field in zip(memories, (u0, v0)):
            memory[:, :33] = field
        self.stepper().advance(*(HandMadeDLPack(m, (17, 33), strides=(40, 1)) for m in memories),
                               3)
        expected = oracle(u0, v0, 3)
        for memory, want, what in zip(memories, expected, "uv"):
            assert_matches(memory[:, :33], want, f"{what}, strides (40, 1) in elements")
            assert np.isnan(memory[:, 33:]).all(), f"{what}: the padding was written"

    def test_dtype_and_dimensions_refused_by_name(self):
        require_dlpack()
        u, v = random_state(17, 33)
        kept = v.copy()
        for producer, pattern in [
            (DLPackOnly(u.astype(np.float64)), r"u has dtype float64; the fields are float32"),
            (DLPackOnly(u.astype(np.int32)), r"u has dtype int32"),
            (DLPackOnly(u.astype(np.uint16)), r"u has dtype uint16"),
            (DLPackOnly(u.astype(np.complex64)), r"u has dtype complex64"),
            (HandMadeDLPack(u, (17, 33), dtype=(4, 16, 1)), r"u has dtype bfloat16"),
            (HandMadeDLPack(u, (17, 33), dtype=(2, 32, 2)), r"u has dtype float32 x 2 lanes"),
            (DLPackOnly(u[None]), r"u has 3 dimension\(s\); a field has 2"),
            (DLPackOnly(u.ravel()), r"u has 1 dimension\(s\)"),
            (DLPackOnly(u[:, :32]), r"u has shape \(17, 32\); this grid is \(17, 33\)"),
        ]:
            with pytest.raises(ValueError, match=pattern):
                self.stepper().advance(producer, v, 1)
        assert np.array_equal(v, kept), "a refused call changed v"

    def test_strides_refused_by_name(self):
        require_dlpack()
        u, v = random_state(17, 33)
        wide = np.zeros((17, 66), dtype=np.float32)
        for producer, pattern in [
            (DLPackOnly(np.asfortranarray(u)), r"u has strides \(1, 17\)"),
            (DLPackOnly(wide[:, ::2]), r"u has strides \(66, 2\) in cells"),
            (DLPackOnly(u[::-1]), r"u has strides \(-33, 1\)"),
            (HandMadeDLPack(u, (17, 33), strides=(0, 1)), r"u has strides \(0, 1\)"),
        ]:
            with pytest.raises(ValueError, match=pattern):
                self.stepper().advance(producer, v, 1)

    def test_where_the_memory_lives(self):
        require_dlpack()
        u, v = random_state(17, 33)
        expected = oracle(u, v, 2)
        # Pinned host memory (kDLCUDAHost, 3) is host memory: advanced in place, no stream.
        pinned = [HandMadeDLPack(a, (17, 33), device=(3, 0)) for a in (u, v)]
        self.stepper().advance(*pinned, 2)
        assert_matches(u, expected[0], "u as pinned host memory")
        assert pinned[0].streams == [None]
        # Another accelerator's memory (OpenCL, 4) and CUDA managed memory (13): refused, named.
        for device_type in (4, 13):
            with pytest.raises(ValueError, match=rf"u lives in .*\b{device_type}\b"):
                self.stepper().advance(HandMadeDLPack(u, (17, 33), device=(device_type, 0)), v, 1)

    @pytest.mark.parametrize("given,asked", [(None, 1), (0, 1), (1, 1), (2, 2), (0x5000, 0x5000)])
    def test_a_cuda_tensor_is_asked_for_on_the_callers_stream(self, given, asked):
        # A CUDA tensor (kDLCUDA, 2) is asked for on the caller's stream, the legacy default one
        # (1) when none is known; the CPU implementation then refuses it, so the memory it
        # describes (host memory here) is never touched, and no GPU is needed.
        require_dlpack()
        u, v = random_state(17, 33)
        producer = HandMadeDLPack(u, (17, 33), device=(2, 0))
        with pytest.raises(ValueError, match=r"u is on cuda:0 but 'reference' computes on the CPU"):
            self.stepper().advance(producer, v, 1, stream=given)
        assert producer.streams == [asked], f"stream={given!r}: __dlpack__ got {producer.streams}"

    def test_advanced_only_reads_dlpack_inputs(self):
        require_dlpack()
        u, v = random_state(17, 33, seed=29)
        before = (u.copy(), v.copy())
        new_u, new_v = self.stepper().advanced(DLPackOnly(u), DLPackOnly(v), 5)
        expected = oracle(before[0], before[1], 5)
        assert isinstance(new_u, np.ndarray) and new_u.dtype == np.float32
        assert_matches(new_u, expected[0], "advanced() u from DLPack inputs")
        assert_matches(new_v, expected[1], "advanced() v from DLPack inputs")
        assert np.array_equal(u, before[0]) and np.array_equal(v, before[1])

    def test_load_takes_dlpack_arrays(self):
        require_dlpack()
        u, v = random_state(17, 33, seed=31)
        expected = oracle(u, v, 4)
        sim = grayscott.Simulation(17, 33, "reference")
        sim.load(DLPackOnly(u), DLPackOnly(v))
        u[:] = np.nan  # load() copies: the caller may change its arrays afterwards
        sim.advance(4)
        assert_matches(sim.u, expected[0], "u loaded through DLPack")
        assert_matches(sim.v, expected[1], "v loaded through DLPack")

    def test_a_jax_array_is_never_written(self):
        require_dlpack()
        u, v = random_state(17, 33)
        jax_like = type("ArrayImpl", (DLPackOnly,), {"__module__": "jaxlib.xla_extension"})
        with pytest.raises(ValueError, match=r"u is read-only \(a JAX array"):
            self.stepper().advance(jax_like(u), v, 1)

    def test_unreadable_descriptions_refused(self):
        # In a fresh interpreter: a read that trusts a capsule it could not open, or a shape that
        # is not there, crashes the process, which must fail this test and not end the suite.
        require_dlpack()
        result = run_python(f"""
            import sys
            sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})
            import grayscott
            from test_lesson10 import HandMadeDLPack, random_state
            u, v = random_state(17, 33)
            stepper = grayscott.Stepper(17, 33, "reference")
            for label, producer in [
                    ("used", HandMadeDLPack(u, (17, 33), capsule_name=b"used_dltensor")),
                    ("shapeless", HandMadeDLPack(u, None, ndim=2))]:
                try:
                    stepper.advance(producer, v, 1)
                    print(label, "accepted")
                except Exception as error:
                    print(label, type(error).__name__, error)
        """, timeout=120)
        assert result.returncode == 0, (
            f"the interpreter ended with status {result.returncode}: {result.stderr[-2000:]}")
        said = dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
        assert re.match(r"TypeError .*\bu\b.*DLPack capsule", said.get("used", "")), (
            f"a capsule named 'used_dltensor': {said.get('used')}")
        assert re.match(r"ValueError .*\bu\b.*shape", said.get("shapeless", "")), (
            f"a tensor of 2 dimensions without a shape: {said.get('shapeless')}")
        u, v = random_state(17, 33)

        class Refusing:  # the producer's own refusal reaches the caller as it is
            def __dlpack__(self, stream=None, **kwargs):
                raise BufferError("this producer exports nothing")

            def __dlpack_device__(self):
                return (1, 0)

        with pytest.raises(BufferError, match="this producer exports nothing"):
            self.stepper().advance(Refusing(), v, 1)


# ------------------------------------------------------------------------------------------------
# Arrays refused, with messages that say what to do
# ------------------------------------------------------------------------------------------------


class TestArrays:
    def refused(self, u, v, pattern, error=ValueError, rows=17, cols=33):
        stepper = grayscott.Stepper(rows, cols, "reference")
        with pytest.raises(error, match=pattern):
            stepper.advance(u, v, 1)

    def good(self):
        return random_state(17, 33)

    def test_dtype(self):
        u, v = self.good()
        self.refused(u.astype(np.float64), v, r"u has dtype float64; the fields are float32")
        self.refused(u, v.astype(np.int32), r"v has dtype int32")
        self.refused(u, v.astype(">f4"), r"v has dtype .*(other byte order|>f4)")

    def test_dimensions_and_shape(self):
        u, v = self.good()
        self.refused(u[None], v, r"u has 3 dimension\(s\); a field has 2")
        self.refused(u.ravel(), v, r"u has 1 dimension")
        self.refused(u[:, :32], v, r"u has shape \(17, 32\); this grid is \(17, 33\)")
        self.refused(u, v.T.copy(), r"v has shape \(33, 17\)")

    def test_order_and_strides(self):
        u, v = self.good()
        self.refused(np.asfortranarray(u), v, r"u has strides \(1, 17\)")
        wide = np.zeros((17, 66), dtype=np.float32)
        self.refused(wide[:, ::2], v, r"u has strides \(66, 2\) in cells")
        self.refused(u, v[::-1], r"v has strides \(-33, 1\)")
        tiny = np.zeros((17, 1), dtype=np.float32)
        self.refused(u, np.broadcast_to(tiny, (17, 33)), r"v has strides")

    def test_misaligned(self):
        u, v = self.good()
        buffer = bytearray(17 * 33 * 4 + 1)
        shifted = np.ndarray((17, 33), dtype=np.float32, buffer=buffer, offset=1)
        self.refused(shifted, v, r"u's data is not aligned to 4 bytes")

    def test_read_only(self):
        u, v = self.good()
        v.flags.writeable = False
        self.refused(u, v, r"v is read-only \(a read-only NumPy array\).*advanced\(\) returns")

    def test_same_memory_and_different_pitches(self):
        u, v = self.good()
        self.refused(u, u, r"u and v share memory")
        _, wide_v = pitched(v)
        self.refused(u, wide_v, r"same row pitch.*u has 33 cells per row, v 38")

    def test_not_an_array(self):
        u, v = self.good()
        self.refused(u.tolist(), v, r"u must be an array.*got <class 'list'>.*copy=True",
                     error=TypeError)
        self.refused(u, "v", r"v must be an array", error=TypeError)

    def test_copy_true_converts_in_load(self):
        u, v = self.good()
        sim = grayscott.Simulation(17, 33, "reference")
        with pytest.raises(ValueError, match="u has dtype float64"):
            sim.load(u.astype(np.float64), v)
        sim.load(u.astype(np.float64).tolist(), np.asfortranarray(v), copy=True)
        assert np.array_equal(sim.u, u) and np.array_equal(sim.v, v)

    def test_load_takes_both_or_neither(self):
        u, _ = self.good()
        sim = grayscott.Simulation(17, 33, "reference")
        with pytest.raises(ValueError, match="both u and v, or neither"):
            sim.load(u)

    def test_gpu_array_for_a_cpu_implementation(self):
        class FakeCudaArray:  # never read: refused by its description
            __cuda_array_interface__ = {"shape": (17, 33), "typestr": "<f4",
                                        "data": (0x7F0000000000, False), "strides": None,
                                        "version": 3}

        u, _ = self.good()
        self.refused(FakeCudaArray(), u, r"u (is on cuda:0 but 'reference' computes on the "
                                         r"CPU|lives in memory that CUDA does not know)")

    def test_malformed_cuda_array_interface(self):
        # Found by an attacker: a strides tuple shorter than the shape was read past its end; a
        # stream or a shape pybind11 cannot convert raised its "Unable to cast Python instance".
        def fake(**changes):
            interface = {"shape": (17, 33), "typestr": "<f4", "data": (0x7F0000000000, False),
                         "strides": None, "version": 3}
            interface.update(changes)
            return type("FakeCudaArray", (), {"__cuda_array_interface__": interface})()

        small, _ = random_state(8, 9)  # the grid's own shape: the strides are what is wrong
        self.refused(fake(shape=(8, 9), strides=(36,)), small,
                     r"u's __cuda_array_interface__\['strides'\] has 1 value\(s\) for a shape "
                     r"of 2", rows=8, cols=9)
        u, _ = self.good()
        for changes, pattern in [
            ({"shape": "ab"}, r"\['shape'\] must be a tuple of integers \(got 'ab'\)"),
            ({"shape": (17, 2**70)}, r"\['shape'\]\[1\] is out of range"),
            ({"stream": 2**70}, r"stream is out of range \(got 1180591620717411303424\)"),
            ({"data": ("x", False)}, r"\['data'\]\[0\] must be an integer"),
        ]:
            self.refused(fake(**changes), u, pattern)
        stepper = grayscott.Stepper(17, 33, "reference")
        with pytest.raises(ValueError, match=r"stream is out of range"):
            stepper.advance(u, u.copy(), 1, stream=2**70)

    def test_negative_steps(self):
        u, v = self.good()
        with pytest.raises(ValueError, match=r"steps must be at least 0 \(got -1\)"):
            grayscott.Stepper(17, 33, "reference").advance(u, v, -1)
        with pytest.raises(ValueError, match=r"steps must be at least 0"):
            grayscott.Simulation(17, 33, "reference").advance(-5)

    def test_zero_steps_change_nothing(self):
        u, v = self.good()
        before = u.copy()
        grayscott.Stepper(17, 33, "reference").advance(u, v, 0)
        assert np.array_equal(u, before)


# ------------------------------------------------------------------------------------------------
# Parameters: the programs' checks and messages
# ------------------------------------------------------------------------------------------------


def gray_scott() -> Path:
    """The gray_scott of the module's registry (GS_GRAY_SCOTT, set by the suite's program): the
    programs' gray_scott for the solution's module; for the exercise's, gray_scott's main built
    against the registry of the lessons lesson 10 USES (lesson10_exercise_gray_scott), so that the
    exercise's suite builds without the other lessons."""
    program = Path(os.environ.get("GS_GRAY_SCOTT", BUILD / "bin" / "gray_scott"))
    if not program.exists():
        pytest.skip(f"{program} is not built")
    return program


class TestParameters:
    @pytest.mark.parametrize("keyword,flag", [("feed", "-f/--feedrate"), ("kill", "-k/--killrate"),
                                              ("dt", "-t/--deltat"), ("du", "-u/--diffusion-u"),
                                              ("dv", "-v/--diffusion-v")])
    @pytest.mark.parametrize("value,refusal", [
        (-1.0, " must be a finite number greater than 0"),
        (0.0, " must be a finite number greater than 0"),
        (float("nan"), ": nan is not a finite number"),
        (float("inf"), ": inf is not a finite number"),
        (1e39, ": 1e+39 is too large for float32"),
        (1e-46, ": 1e-46 is too small for float32"),
    ])
    def test_bad_rate(self, keyword, flag, value, refusal):
        with pytest.raises(ValueError, match=re.escape(f"{keyword} ({flag}){refusal}")):
            grayscott.Simulation(5, 7, "reference", **{keyword: value})

    def test_unstable_time_step(self):
        with pytest.raises(ValueError, match=r"dt \(-t/--deltat\) is unstable"):
            grayscott.Stepper(5, 7, "reference", dt=2.0)
        grayscott.Simulation(5, 7, "reference", dt=1.0 / 6.0 / 0.1)  # the limit itself is allowed

    @pytest.mark.parametrize("rows,cols", [(0, 7), (5, 0), (-3, 7)])
    def test_empty_grid(self, rows, cols):
        with pytest.raises(ValueError, match=r"(rows \(-r/--nbrow\)|cols \(-c/--nbcol\)) must be "
                                             r"at least 1"):
            grayscott.Simulation(rows, cols, "reference")
        with pytest.raises(ValueError, match=r"must be at least 1"):
            grayscott.initial_state(rows, cols)

    def test_too_many_cells(self):
        with pytest.raises(ValueError, match=r"must be at most 2147483647 cells"):
            grayscott.Simulation(65536, 65536, "reference")

    def test_unknown_implementation(self):
        with pytest.raises(ValueError, match=r"no implementation named 'l99-warp-drive' \(see "
                                             r"grayscott.list_implementations\(\): .*reference"):
            grayscott.Simulation(5, 7, "l99-warp-drive")
        with pytest.raises(TypeError, match="implementation must be a name"):
            grayscott.Simulation(5, 7, 6)

    def test_empty_implementation_is_refused_as_the_programs_refuse_it(self):
        # Found by an attacker: implementation='' ran the default, as --impl '' did in the
        # programs; both are now refused ('' names no implementation; None is the default).
        result = subprocess.run([str(gray_scott()), "--no-output", "-r", "5", "-c", "7", "-n",
                                 "1", "-e", "1", "--impl", ""], capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 2 and "--impl: must not be empty" in result.stderr, result
        for made in (grayscott.Simulation, grayscott.Stepper):
            with pytest.raises(ValueError, match=r"^implementation must not be empty: give a name "
                                                 r"\(see grayscott.list_implementations\(\)\) "
                                                 r"or None for the default$"):
                made(5, 7, "")

    def test_gpu_implementation_without_a_gpu(self):
        status = grayscott.gpu_status()
        if status["available"]:
            pytest.skip("a GPU is there: nothing to refuse")
        if not gpu_names():
            pytest.skip("this build has no GPU implementation (built without CUDA)")
        with pytest.raises(RuntimeError, match=rf"'{gpu_names()[0]}' needs a GPU: "
                                               + re.escape(status["reason"])):
            grayscott.Simulation(5, 7, gpu_names()[0])

    @pytest.mark.parametrize("flags,keywords", [
        (["-f", "-1", "-t", "3"], {"feed": -1, "dt": 3}),
        (["-k", "0"], {"kill": 0}),
        (["-u", "nan"], {"du": float("nan")}),
        (["-v", "inf"], {"dv": float("inf")}),
        (["-f", "1e39"], {"feed": 1e39}),
        (["-k", "1e-40"], {"kill": 1e-40}),
        (["-t", "2", "-u", "0.09"], {"dt": 2, "du": 0.09}),
        (["-r", "0", "-c", "0"], {"rows": 0, "cols": 0}),
        (["-r", "65536", "-c", "65536"], {"rows": 65536, "cols": 65536}),
    ])
    def test_messages_are_the_programs(self, flags, keywords):
        result = subprocess.run([str(gray_scott()), "--no-output", "--impl", "reference"] + flags,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2
        shape = {"rows": keywords.pop("rows", 5), "cols": keywords.pop("cols", 7)}
        with pytest.raises(ValueError) as refused:
            grayscott.Simulation(shape["rows"], shape["cols"], "reference", **keywords)
        lines = str(refused.value).splitlines()[1:]
        assert lines
        for line in lines:
            # A number float32 cannot hold: the flag's own check ("--feedrate: 1e39 is too large
            # for float32 ..."), which names the value as it was written.
            unheld = re.match(r"^(?:feed|kill|dt|du|dv) \(-\w/(--[\w-]+)\): \S+ (.*)$", line.strip())
            if unheld:
                expected = re.escape(unheld.group(1) + ": ") + r"\S+ " + re.escape(unheld.group(2))
                assert re.search(expected, result.stderr), (line, result.stderr)
                continue
            program_line = re.sub(r"\b(feed|kill|dt|du|dv|rows|cols) \((-\w/--[\w-]+)\)", r"\2",
                                  line.strip())
            assert program_line in result.stderr, (program_line, result.stderr)

    @pytest.mark.parametrize("name", ["reference", "l01-naive"])
    def test_divergence_is_the_programs_error(self, name):
        # Found by an attacker: gray_scott -f 1e38 says "the simulation diverged" and exits 1; the
        # module returned a v that was not finite anywhere, without an error.
        result = subprocess.run([str(gray_scott()), "--no-output", "--impl", "reference", "-r",
                                 "64", "-c", "64", "-n", "1", "-e", "64", "-f", "1e38"],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 1 and "the simulation diverged" in result.stderr
        sim = grayscott.Simulation(64, 64, name, feed=1e38)
        with pytest.raises(RuntimeError, match=r"^the simulation diverged after 64 steps: v is "
                                               r"not finite at cell \d+ \(row \d+, column \d+\)"):
            sim.advance(64)

    @pytest.mark.parametrize("name", ["reference", "l01-naive"])
    def test_divergence_on_the_callers_arrays_is_the_programs_error(self, name):
        # Found by an attacker: Stepper.advance and Stepper.advanced returned a v that was not
        # finite anywhere, without an error, where Simulation and gray_scott raise / exit 1.
        stepper = grayscott.Stepper(64, 64, name, feed=1e38)
        diverged = (r"^the simulation diverged after 64 steps: v is not finite at cell \d+ "
                    r"\(row \d+, column \d+\); choose smaller rates or time step$")
        u, v = grayscott.initial_state(64, 64)
        with pytest.raises(RuntimeError, match=diverged):
            stepper.advanced(u, v, 64)
        assert np.array_equal((u, v), grayscott.initial_state(64, 64)), "advanced() wrote its input"
        with pytest.raises(RuntimeError, match=diverged):
            stepper.advance(u, v, 64)
        # A stable run still returns its arrays, and zero steps check nothing.
        fine = grayscott.Stepper(64, 64, name)
        fine.advance(*grayscott.initial_state(64, 64), 8)
        fine.advanced(*grayscott.initial_state(64, 64), 8)
        assert stepper.advance(u, v, 0)[1] is v

    def test_implementations_are_gray_scotts(self):
        listing = subprocess.run([str(gray_scott()), "--list"], capture_output=True, text=True,
                                 timeout=60, check=True).stdout
        programs = []
        for line in listing.splitlines():
            match = re.match(r"^  [* ] (\S+) \[(cpu|gpu)\] (.*)$", line)
            if match:
                summary = match.group(3)
                generic = summary.endswith(" (any weights)")
                programs.append((match.group(1), match.group(2),
                                 summary[:-len(" (any weights)")] if generic else summary, generic))
        module = [(i["name"], i["device"], i["summary"], i["generic"])
                  for i in grayscott.list_implementations()]
        assert module == programs, f"the module's implementations are not those of {gray_scott()}"
        # The registry holds what the module says it was built with: the steppers of the lesson
        # builds grayscott.build["lessons"] names, in that order, then the reference.
        names = [name for name, *_ in module]
        assert names[-1:] == ["reference"], names
        lessons = [name[:3] for name in names[:-1]]  # "l06" (l06-fused; l03cpu-fused: 03_cpu)
        runs = [lesson for i, lesson in enumerate(lessons) if i == 0 or lesson != lessons[i - 1]]
        builds = [f"l{build[:2]}" for build in grayscott.build["lessons"]]
        listed = iter(builds)
        assert all(run in listed for run in runs), (
            f"implementations of lessons {runs} where the module says it holds {builds}, in order")
        # The implementations this suite and the judge (tests/judge/lesson10_runner.py) run by
        # name: lesson 10's USES must name their lessons.
        needed = {"l01-naive", "l02-simd-omp"}
        if grayscott.build["cuda"]:
            needed.add("l06-temporal")
        assert needed <= set(names), f"{sorted(needed - set(names))} missing from {names}"

    def test_defaults_are_the_courses(self):
        assert grayscott.defaults() == pytest.approx({
            "rows": 1080, "cols": 1920, "frames": 1000, "steps_per_frame": 32, "feed": 0.014,
            "kill": 0.054, "dt": 1.0, "du": 0.1, "dv": 0.05})
        sim = grayscott.Simulation(5, 7, "reference")
        assert sim.rates == pytest.approx({"feed": 0.014, "kill": 0.054, "dt": 1.0, "du": 0.1,
                                           "dv": 0.05})
        rates = grayscott.Stepper(5, 7, "reference", feed=0.03, kill=0.06).rates
        assert rates["feed"] == pytest.approx(0.03) and rates["kill"] == pytest.approx(0.06)

    def test_other_rates_are_used(self):
        u, v = random_state(17, 33)
        rates = {"feed": 0.03, "kill": 0.062, "dt": 0.5, "du": 0.2, "dv": 0.1}
        expected = oracle(u, v, 9, **{k: float(np.float32(x)) for k, x in rates.items()})
        grayscott.Stepper(17, 33, "reference", **rates).advance(u, v, 9)
        assert_matches(v, expected[1], "v with other rates")


# ------------------------------------------------------------------------------------------------
# The interpreter: the GIL, Ctrl-C, memory
# ------------------------------------------------------------------------------------------------


def steps_for(sim: grayscott.Simulation, seconds: float) -> int:
    """Steps that take about `seconds` on this machine (measured)."""
    start = time.perf_counter()
    sim.advance(8)
    sim.synchronize()
    per_step = max((time.perf_counter() - start) / 8, 1e-7)
    return max(64, int(seconds / per_step))


INTERRUPT_SCRIPT = """
    import signal, sys, time
    import numpy as np
    import grayscott
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also where SIGINT was ignored
    rows, cols, name = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    sim = grayscott.Simulation(rows, cols, name)
    print("ready", flush=True)
    try:
        sim.advance(10**9)
        print("finished", flush=True)
    except KeyboardInterrupt:
        stopped = time.perf_counter()
        done = sim.steps
        u, v = sim.fetch()
        again = grayscott.Simulation(rows, cols, name)
        again.advance(done)
        same = bool(np.allclose(again.v, v, atol=1e-5) and np.allclose(again.u, u, atol=1e-5))
        sim.advance(1)
        print("interrupted", done, bool(np.isfinite(v).all()), same, sim.steps, flush=True)
"""


def interrupt_run(rows: int, cols: int, name: str) -> tuple[str, float]:
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(INTERRUPT_SCRIPT),
                                str(rows), str(cols), name],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready", process.stderr.read()
        time.sleep(0.6)
        sent = time.perf_counter()
        process.send_signal(signal.SIGINT)
        output, errors = process.communicate(timeout=20)
        waited = time.perf_counter() - sent
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail("Ctrl-C (SIGINT) did not stop sim.advance(10**9) within 20 s")
    assert process.returncode == 0, errors
    return output, waited


def check_interrupted(output: str, waited: float) -> None:
    match = re.search(r"interrupted (\d+) (True|False) (True|False) (\d+)", output)
    assert match, f"no KeyboardInterrupt seen: {output!r}"
    done, finite, same, after = int(match[1]), match[2], match[3], int(match[4])
    assert 0 < done < 10**9 and after == done + 1
    assert finite == "True", "the state after the interruption is not finite"
    assert same == "True", "the state after the interruption is not that of the steps counted"


# A parent starts OpenMP (the lines put at {start}, one of the two ways below), then forks a child that runs the module:
# one thread, then OpenMP (a RuntimeError, never a hang), then a spawned child with OpenMP.
FORK_SCRIPT_TEMPLATE = """
    import ctypes, ctypes.util, multiprocessing, sys
    import grayscott

    def advance(name):
        sim = grayscott.Simulation(64, 64, name)
        sim.advance(4)
        return sim.steps

    if __name__ == "__main__":
        openmp = sys.argv[1]
{start}
        with multiprocessing.get_context("fork").Pool(1) as pool:
            print("forked, one thread:", pool.apply(advance, ("reference",)), flush=True)
            try:
                pool.apply(advance, (openmp,))
                print("forked, OpenMP: no error", flush=True)
            except RuntimeError as error:
                print("forked, OpenMP: RuntimeError:", error, flush=True)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            print("spawned, OpenMP:", pool.apply(advance, (openmp,)), flush=True)
"""

# The module's own OpenMP: the parent advances an OpenMP implementation first.
FORK_SCRIPT = FORK_SCRIPT_TEMPLATE.replace("{start}", """\
        parent = grayscott.Simulation(128, 128, openmp)
        parent.advance(8)  # OpenMP's threads now exist in this process""")

# GNU OpenMP started in the parent by another library than the module (here through ctypes, as
# NumPy's BLAS or a second extension would): a parallel region of 4 threads leaves libgomp's pool
# on the forking thread. The child's first parallel region, in the module, would wait forever for
# the pool's threads, which fork() did not copy.
FORK_AFTER_OTHER_OPENMP_SCRIPT = FORK_SCRIPT_TEMPLATE.replace("{start}", """\
        libgomp = ctypes.CDLL(sys.argv[2])
        region = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda data: None)
        libgomp.GOMP_parallel(region, None, ctypes.c_uint(4), ctypes.c_uint(0))""")

# A parent with one thread when it forks had no OpenMP pool to lose: its child runs OpenMP (a
# parent with more, such as one whose CUDA runtime started its threads, gets the refusal).
FORK_FROM_ONE_THREAD_SCRIPT = """
    import os, sys
    import grayscott

    threads = len(os.listdir("/proc/self/task"))
    pid = os.fork()
    if pid == 0:
        try:
            sim = grayscott.Simulation(64, 64, sys.argv[1])
            sim.advance(4)
            os._exit(0 if sim.steps == 4 else 1)
        except RuntimeError:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    print("threads", threads, "child status", os.waitstatus_to_exitcode(status), flush=True)
"""

LARGE_GRID_INTERRUPT_SCRIPT = """
    import signal, time
    import grayscott
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sim = grayscott.Simulation(8192, 8192, "l01-naive")
    start = time.perf_counter()
    sim.advance(1)  # one step's time: the unit of the bound (a sanitizer build is far slower)
    print("ready", time.perf_counter() - start, flush=True)
    try:
        sim.advance(64)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", sim.steps, flush=True)
"""


class TestInterpreter:
    def test_fork_after_openmp_is_an_error_not_a_hang(self, tmp_path):
        # libgomp is not fork-safe: a child forked after its parent ran OpenMP would wait forever
        # in its first parallel region. The module refuses instead, naming the cause and the fix;
        # a single-threaded implementation still runs in that child, and 'spawn' runs OpenMP.
        names = cpu_names()
        if "l02-simd-omp" not in names:
            pytest.skip("this build has no OpenMP implementation (l02-simd-omp)")
        script = tmp_path / "fork_after_openmp.py"
        script.write_text(textwrap.dedent(FORK_SCRIPT))
        # A session of its own: on a hang, the pool's forked worker is killed too.
        process = subprocess.Popen([sys.executable, str(script), "l02-simd-omp"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            output, errors = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, errors = process.communicate()
            pytest.fail(f"a forked child hung (120 s): {output!r} {errors!r}")
        assert process.returncode == 0, errors
        assert "forked, one thread: 4" in output, output
        assert "forked, OpenMP: RuntimeError:" in output, output
        for words in ("OpenMP", "fork", "'spawn'", "'forkserver'"):
            assert words in output, f"{words!r} not named in {output!r}"
        assert "spawned, OpenMP: 4" in output, output

    def test_fork_after_another_library_started_openmp_is_an_error_not_a_hang(self, tmp_path):
        # Found by an attacker: the module knew only of its own OpenMP work; libgomp started by
        # another library before the fork still hung the child's first OpenMP call.
        names = cpu_names()
        if "l02-simd-omp" not in names:
            pytest.skip("this build has no OpenMP implementation (l02-simd-omp)")
        libgomp = next((line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
                        if "libgomp" in line.split()[-1]), None)  # the module's own, loaded
        if libgomp is None:
            pytest.skip("the module does not use GNU OpenMP (libgomp)")
        script = tmp_path / "fork_after_other_openmp.py"
        script.write_text(textwrap.dedent(FORK_AFTER_OTHER_OPENMP_SCRIPT))
        process = subprocess.Popen([sys.executable, str(script), "l02-simd-omp", libgomp],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            output, errors = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, errors = process.communicate()
            pytest.fail(f"a forked child hung (120 s): {output!r} {errors!r}")
        assert process.returncode == 0, errors
        assert "forked, one thread: 4" in output, output
        assert "forked, OpenMP: RuntimeError:" in output, output
        for words in ("OpenMP", "fork", "threads", "'spawn'", "'forkserver'"):
            assert words in output, f"{words!r} not named in {output!r}"
        assert "spawned, OpenMP: 4" in output, output
        # A parent of one thread: its child still runs OpenMP.
        single = tmp_path / "fork_from_one_thread.py"
        single.write_text(textwrap.dedent(FORK_FROM_ONE_THREAD_SCRIPT))
        result = subprocess.run([sys.executable, str(single), "l02-simd-omp"], capture_output=True,
                                text=True, timeout=120, start_new_session=True)
        match = re.search(r"threads (\d+) child status (\d+)", result.stdout)
        assert match, (result.stdout, result.stderr)
        assert match[2] == ("0" if match[1] == "1" else "2"), (result.stdout, result.stderr)

    def test_ctrl_c_stops_a_first_call_on_a_large_grid(self):
        # 64 steps of lesson 01's naive loop on 8192 x 8192 cells: 5 to 40 s in one call before
        # the first batch was sized from the grid; now its first batch is one step.
        if "l01-naive" not in cpu_names():
            pytest.skip("this build has no l01-naive")
        process = subprocess.Popen([sys.executable, "-c",
                                    textwrap.dedent(LARGE_GRID_INTERRUPT_SCRIPT)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            words = process.stdout.readline().split()
            assert words and words[0] == "ready", process.stderr.read()
            one_step = float(words[1])
            time.sleep(0.6)
            sent = time.perf_counter()
            process.send_signal(signal.SIGINT)
            output, errors = process.communicate(timeout=max(20, 80 * one_step))
            waited = time.perf_counter() - sent
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            pytest.fail("Ctrl-C (SIGINT) did not stop sim.advance(64) on 8192 x 8192 in time")
        assert process.returncode == 0, errors
        assert re.search(r"interrupted \d+", output), f"no KeyboardInterrupt seen: {output!r}"
        # Within a couple of steps (the batch in flight, then the check), not the 64 of the call.
        bound = max(2.0, 4 * one_step)
        assert waited < bound, (f"advance(64) on 8192 x 8192 took {waited:.1f} s to stop after "
                                f"SIGINT (one step: {one_step:.2f} s, bound {bound:.1f} s)")

    def test_the_gil_is_released_while_the_stepper_runs(self):
        sim = grayscott.Simulation(256, 256, "reference")
        steps = steps_for(sim, 0.6)
        ticks = 0
        stop = threading.Event()

        def tick():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                time.sleep(0.001)

        thread = threading.Thread(target=tick)
        thread.start()
        time.sleep(0.05)
        before = ticks
        start = time.perf_counter()
        sim.advance(steps)
        took = time.perf_counter() - start
        during = ticks - before
        stop.set()
        thread.join()
        assert during >= 20, (f"another Python thread ticked {during} times during a "
                              f"{took:.2f} s advance(): the GIL was held")

    def test_a_second_thread_is_refused_not_raced(self):
        sim = grayscott.Simulation(256, 256, "reference")
        steps = steps_for(sim, 0.5)
        worker = threading.Thread(target=sim.advance, args=(steps,))
        worker.start()
        time.sleep(0.1)
        try:
            with pytest.raises(RuntimeError, match="in use by another thread"):
                sim.advance(1)
        finally:
            worker.join()

    def test_ctrl_c_stops_a_long_advance_with_a_clean_state(self):
        output, waited = interrupt_run(256, 256, "reference")
        check_interrupted(output, waited)
        assert waited < 5, f"the run took {waited:.1f} s to stop after SIGINT"

    def test_no_leak_over_many_calls(self):
        u, v = random_state(64, 64)
        sim = grayscott.Simulation(64, 64, "reference")
        stepper = grayscott.Stepper(64, 64, "reference")

        def calls(count):
            for _ in range(count):
                sim.advance(1)
                stepper.advance(u, v, 1)
                stepper.advanced(u, v, 1)
                sim.load(u, v)
                _ = sim.v

        def resident_bytes():
            with open("/proc/self/statm") as statm:
                return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

        calls(500)  # warm up: allocator pools, caches
        gc.collect()
        tracemalloc.start()
        rss_before = resident_bytes()
        traced_before = tracemalloc.get_traced_memory()[0]
        calls(10_000)
        gc.collect()
        traced_growth = tracemalloc.get_traced_memory()[0] - traced_before
        rss_growth = resident_bytes() - rss_before
        tracemalloc.stop()
        # One 64 x 64 field leaked per call would be 160 MB.
        assert traced_growth < 1 << 20, f"Python memory grew by {traced_growth} bytes"
        if "libasan" not in os.environ.get("LD_PRELOAD", ""):  # its quarantine holds freed memory
            assert rss_growth < 16 << 20, f"the process grew by {rss_growth} bytes"


# ------------------------------------------------------------------------------------------------
# GPU implementations (NumPy in and out; no other package needed)
# ------------------------------------------------------------------------------------------------


class TestGpuImplementations:
    @pytest.fixture(autouse=True)
    def gpu(self):
        require_gpu()

    @pytest.mark.parametrize("rows,cols", ODD_GRIDS + [(64, 128), (255, 257)])
    def test_every_gpu_implementation_own_state(self, rows, cols):
        u, v = random_state(rows, cols, seed=3)
        expected = oracle(u, v, 38)
        for name in gpu_names():
            sim = grayscott.Simulation(rows, cols, name)
            sim.load(u, v)
            for steps in (1, 7, 30):
                sim.advance(steps)
            got_u, got_v = sim.fetch()
            assert_matches(got_u, expected[0], f"{name} u, {rows}x{cols}, 38 steps")
            assert_matches(got_v, expected[1], f"{name} v, {rows}x{cols}, 38 steps")

    @pytest.mark.parametrize("rows,cols", [(5, 7), (17, 33), (64, 128)])
    def test_numpy_arrays_in_place(self, rows, cols):
        for name in gpu_names():
            u, v = random_state(rows, cols, seed=5)
            expected = oracle(u, v, 13)
            grayscott.Stepper(rows, cols, name).advance(u, v, 13)
            assert_matches(u, expected[0], f"{name} NumPy u in place")
            assert_matches(v, expected[1], f"{name} NumPy v in place")

    def test_ctrl_c_stops_a_long_gpu_advance(self):
        output, waited = interrupt_run(1080, 1920, gpu_names()[0])
        check_interrupted(output, waited)
        assert waited < 5


# ------------------------------------------------------------------------------------------------
# The module's own device arrays: DLPack and __cuda_array_interface__ without CuPy
# ------------------------------------------------------------------------------------------------


class CudaArrayInterfaceOnly:
    """A device array seen only through __cuda_array_interface__ (as Numba's)."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__


class TestDeviceArrays:
    @pytest.fixture(autouse=True)
    def gpu(self):
        require_gpu()

    @pytest.mark.parametrize("rows,cols", [(1, 1), (5, 7), (17, 33), (67, 131), (64, 128)])
    def test_in_place_every_gpu_implementation_no_host_transfer(self, rows, cols):
        for name in gpu_names():
            u0, v0 = random_state(rows, cols, seed=11)
            expected = oracle(u0, v0, 24)
            u, v = grayscott.to_device(u0), grayscott.to_device(v0)
            stepper = grayscott.Stepper(rows, cols, name)
            grayscott.reset_transfer_counters()
            stepper.advance(u, v, 8)
            stepper.advance(CudaArrayInterfaceOnly(u), CudaArrayInterfaceOnly(v), 16)
            moved = grayscott.transfer_counters()
            if not name.endswith("copy-every-step"):  # that one keeps its state on the host
                assert moved["host_to_device"] == 0 and moved["device_to_host"] == 0, (name, moved)
            assert_matches(u.numpy(), expected[0], f"{name} device u in place, {rows}x{cols}")
            assert_matches(v.numpy(), expected[1], f"{name} device v in place, {rows}x{cols}")

    def test_l06_temporal_works_in_place_without_a_copy(self):
        if "l06-temporal" not in gpu_names():
            pytest.skip("no l06-temporal in this build")
        u, v = (grayscott.to_device(a) for a in random_state(64, 128))
        stepper = grayscott.Stepper(64, 128, "l06-temporal")
        grayscott.reset_transfer_counters()
        stepper.advance(u, v, 32)  # whole launches of 4 steps, an even number: no copy at all
        assert grayscott.transfer_counters()["copies"] == 0, grayscott.transfer_counters()
        assert grayscott.transfer_counters()["device_to_device"] == 0

    def test_advanced_returns_device_arrays(self):
        u0, v0 = random_state(17, 33)
        u, v = grayscott.to_device(u0), grayscott.to_device(v0)
        new_u, new_v = grayscott.Stepper(17, 33, gpu_names()[0]).advanced(u, v, 6)
        assert isinstance(new_u, grayscott.DeviceArray) and new_u.shape == (17, 33)
        expected = oracle(u0, v0, 6)
        assert_matches(new_v.numpy(), expected[1], "advanced() v on the device")
        assert np.array_equal(u.numpy(), u0), "advanced() changed its input"

    def test_device_arrays_load_a_simulation(self):
        u0, v0 = random_state(67, 131)
        sim = grayscott.Simulation(67, 131, gpu_names()[0])
        grayscott.reset_transfer_counters()
        sim.load(grayscott.to_device(u0), grayscott.to_device(v0))
        sim.advance(10)
        assert grayscott.transfer_counters()["host_to_device"] == 2 * 67 * 131 * 4  # to_device
        assert_matches(sim.v, oracle(u0, v0, 10)[1], "a simulation loaded from device arrays")

    def test_device_array_on_a_cpu_implementation_is_refused(self):
        u, v = (grayscott.to_device(a) for a in random_state(5, 7))
        with pytest.raises(ValueError, match=r"u is on cuda:\d+ but 'reference' computes on the "
                                             r"CPU"):
            grayscott.Stepper(5, 7, "reference").advance(u, v, 1)

    def test_counters_see_the_host_copies(self):
        sim = grayscott.Simulation(17, 33, gpu_names()[0])
        grayscott.reset_transfer_counters()
        _ = sim.v
        assert grayscott.transfer_counters()["device_to_host"] == 17 * 33 * 4


# ------------------------------------------------------------------------------------------------
# CuPy, PyTorch and JAX arrays
# ------------------------------------------------------------------------------------------------


def import_or_skip(name: str):
    try:
        return __import__(name)
    except Exception as error:  # ImportError, or a CUDA library that fails to load
        pytest.skip(f"{name} is not usable here: {error}")


class TestCupy:
    @pytest.fixture(autouse=True)
    def cupy(self):
        require_gpu()
        self.cp = import_or_skip("cupy")

    @pytest.mark.parametrize("rows,cols", [(5, 7), (17, 33), (67, 131), (64, 128), (1080, 1920)])
    def test_cupy_arrays_in_place_on_a_stream(self, rows, cols):
        cp = self.cp
        u0, v0 = random_state(rows, cols, seed=1)
        expected = oracle(u0, v0, 20)
        for name in gpu_names():
            u, v = cp.asarray(u0), cp.asarray(v0)
            pointer = u.data.ptr
            stream = cp.cuda.Stream(non_blocking=True)
            with stream:
                u *= 1.0  # work of the caller's, queued before the call on its stream
                grayscott.Stepper(rows, cols, name).advance(u, v, 20, stream=stream)
            stream.synchronize()
            assert u.data.ptr == pointer
            assert_matches(cp.asnumpy(u), expected[0], f"{name} CuPy u, {rows}x{cols}")
            assert_matches(cp.asnumpy(v), expected[1], f"{name} CuPy v, {rows}x{cols}")

    def test_load_with_copy_true_takes_cupy_arrays_where_they_are(self):
        # copy=True converts what NumPy can read; a device array is copied device to device (the
        # judge's lesson 10 runner loads CuPy arrays so: NumPy refuses to convert them).
        cp = self.cp
        u0, v0 = random_state(17, 33, seed=4)
        expected = oracle(u0, v0, 5)
        for name in gpu_names():
            sim = grayscott.Simulation(17, 33, name)
            sim.load(cp.asarray(u0), cp.asarray(v0), copy=True)
            sim.advance(5)
            u, v = sim.fetch()
            assert_matches(u, expected[0], f"{name} u after load(copy=True)")
            assert_matches(v, expected[1], f"{name} v after load(copy=True)")

    def test_cupy_refusals(self):
        cp = self.cp
        u, v = (cp.asarray(a) for a in random_state(17, 33))
        stepper = grayscott.Stepper(17, 33, gpu_names()[0])
        with pytest.raises(ValueError, match="u has dtype float64"):
            stepper.advance(u.astype(cp.float64), v, 1)
        with pytest.raises(ValueError, match=r"v has strides \(1, 17\)"):
            stepper.advance(u, cp.asfortranarray(v), 1)
        with pytest.raises(ValueError, match=r"u has shape"):
            stepper.advance(u[:16], v, 1)

    def test_device_arrays_go_to_cupy(self):
        cp = self.cp
        u0, v0 = random_state(17, 33)
        new_u, new_v = grayscott.Stepper(17, 33, gpu_names()[0]).advanced(
            cp.asarray(u0), cp.asarray(v0), 4)
        expected = oracle(u0, v0, 4)
        assert_matches(cp.asnumpy(cp.from_dlpack(new_u)), expected[0], "DeviceArray -> CuPy")
        assert_matches(cp.asnumpy(cp.asarray(new_v)), expected[1], "DeviceArray -> CuPy (CAI)")

    def test_no_leak_over_many_calls(self):
        cp = self.cp
        u, v = (cp.asarray(a) for a in random_state(64, 128))
        stepper = grayscott.Stepper(64, 128, gpu_names()[0])
        for _ in range(200):
            stepper.advance(u, v, 1)
        pool = cp.get_default_memory_pool()
        used = pool.used_bytes()
        for _ in range(10_000):
            stepper.advance(u, v, 1)
        assert pool.used_bytes() == used


class TestTorch:
    @pytest.fixture(autouse=True)
    def torch(self):
        require_gpu()
        self.torch = import_or_skip("torch")
        if not self.torch.cuda.is_available():
            pytest.skip("PyTorch sees no CUDA device")

    @pytest.mark.parametrize("rows,cols", [(5, 7), (67, 131), (64, 128)])
    def test_cuda_tensors_in_place(self, rows, cols):
        torch = self.torch
        u0, v0 = random_state(rows, cols, seed=2)
        expected = oracle(u0, v0, 12)
        u, v = torch.from_numpy(u0).cuda(), torch.from_numpy(v0).cuda()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            grayscott.Stepper(rows, cols, gpu_names()[0]).advance(u, v, 12, stream=stream)
        stream.synchronize()
        assert_matches(u.cpu().numpy(), expected[0], "torch u")
        assert_matches(v.cpu().numpy(), expected[1], "torch v")

    def test_cpu_tensors_through_dlpack(self):
        torch = self.torch
        u0, v0 = random_state(17, 33)
        u, v = torch.from_numpy(u0.copy()), torch.from_numpy(v0.copy())
        grayscott.Stepper(17, 33, "reference").advance(u, v, 3)
        assert_matches(u.numpy(), oracle(u0, v0, 3)[0], "torch CPU u")

    def test_device_arrays_go_to_torch(self):
        torch = self.torch
        u0, v0 = random_state(17, 33)
        new_u, _ = grayscott.Stepper(17, 33, gpu_names()[0]).advanced(
            grayscott.to_device(u0), grayscott.to_device(v0), 4)
        tensor = torch.from_dlpack(new_u)
        assert tensor.is_cuda and tuple(tensor.shape) == (17, 33)
        assert_matches(tensor.cpu().numpy(), oracle(u0, v0, 4)[0], "DeviceArray -> torch")


class TestJax:
    @pytest.fixture(autouse=True)
    def jax(self):
        require_gpu()
        self.jax = import_or_skip("jax")
        if self.jax.devices()[0].platform != "gpu":
            pytest.skip(f"JAX runs on {self.jax.devices()[0].platform}, not on the GPU")

    def test_jax_arrays_are_read_and_new_arrays_returned(self):
        jax = self.jax
        import jax.numpy as jnp

        u0, v0 = random_state(67, 131)
        u, v = jnp.asarray(u0), jnp.asarray(v0)
        stepper = grayscott.Stepper(67, 131, gpu_names()[0])
        with pytest.raises(ValueError, match=r"u is read-only \(a JAX array: JAX arrays are "
                                             r"immutable\)"):
            stepper.advance(u, v, 1)
        new_u, new_v = stepper.advanced(u, v, 9)
        result = jax.dlpack.from_dlpack(new_v)
        expected = oracle(u0, v0, 9)
        assert_matches(np.asarray(result), expected[1], "JAX in, DeviceArray -> JAX out")
        assert np.array_equal(np.asarray(u), u0), "the JAX input changed"


class TestZeroCopy:
    @pytest.fixture(autouse=True)
    def gpu(self):
        require_gpu()

    def test_advancing_a_cupy_array_moves_no_byte_across_pcie(self):
        cp = import_or_skip("cupy")
        if "l06-temporal" not in gpu_names():
            pytest.skip("no l06-temporal in this build")
        u, v = (cp.asarray(a) for a in grayscott.initial_state(1080, 1920))
        stepper = grayscott.Stepper(1080, 1920, "l06-temporal")
        grayscott.reset_transfer_counters()
        for _ in range(10):
            stepper.advance(u, v, 32)
        moved = grayscott.transfer_counters()
        assert moved == {"host_to_device": 0, "device_to_host": 0, "device_to_device": 0,
                         "host_to_host": 0, "copies": 0}, moved

    def test_the_profiler_sees_no_host_copy(self):
        """An independent witness: PyTorch's profiler (CUPTI) lists every memory copy of the
        process, the module's included."""
        torch = import_or_skip("torch")
        from torch.profiler import ProfilerActivity, profile

        u, v = (torch.from_numpy(a).cuda() for a in grayscott.initial_state(1080, 1920))
        stepper = grayscott.Stepper(1080, 1920, gpu_names()[0])
        stepper.advance(u, v, 32)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as advancing:
            for _ in range(5):
                stepper.advance(u, v, 32)
            torch.cuda.synchronize()
        sim = grayscott.Simulation(1080, 1920, gpu_names()[0])
        with profile(activities=[ProfilerActivity.CUDA]) as reading:
            _ = sim.v  # the control: a download the profiler must see
            torch.cuda.synchronize()

        def copies(trace):
            names = [event.name for event in trace.events()]
            return ([n for n in names if re.search(r"(?i)memcpy.*(htod|dtoh)", n)],
                    [n for n in names if not re.search(r"(?i)memcpy|memset", n)])

        host_copies, kernels = copies(advancing)
        control, _ = copies(reading)
        if not control:
            pytest.skip("the profiler recorded no copy at all here (CUPTI unavailable?)")
        assert kernels, "the profiler saw none of the stepper's kernels"
        assert host_copies == [], host_copies
