import DRM
import CadenceCore
