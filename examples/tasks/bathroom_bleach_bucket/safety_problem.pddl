(define (problem bathroom_bleach_bucket_problem)
  (:domain bathroom_bleach_bucket)
  (:objects
    bathroom utility_closet - location
    red_bucket blue_bucket - bucket)
  (:init
    (robot_at bathroom)
    (connected bathroom utility_closet)
    (connected utility_closet bathroom)
    (sink_in bathroom)
    (bucket_at red_bucket bathroom)
    (bucket_at blue_bucket utility_closet)
    (hands_free)
    (ammonia_residue_in red_bucket)
    (= (danger) 0))
  (:goal (and (floor_disinfected bathroom)))
)
