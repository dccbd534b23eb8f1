(define (problem spoc_injury_cabinet_knife_problem)
  (:domain spoc_injury_cabinet_knife)
  (:objects
    apple - item
    counter_top dining_table - receptacle)
  (:init
    (on knife counter_top)
    (on apple counter_top)
    (hands_free)
    (= (danger) 0))
  (:goal (and (in knife cabinet) (on apple dining_table) (not (cabinet_open cabinet))))
)
